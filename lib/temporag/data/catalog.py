"""Every known data file: where it goes, its checksums, where it comes from, whether it is needed.

Paths are relative to the data folder (``TEMPORAG_DATA``) and name the file without ``.gz``; the
folder may hold it gzip-compressed (as ``shared/data`` does) or plain (as a download leaves it).
Two checksums per file, because compression is not reproducible byte for byte: ``sha256`` is the
``.gz`` as staged in ``shared/data`` (a fast check), ``raw_sha256`` the decompressed content (what
a download is checked against, and the fallback for a re-compressed copy).  ``url`` pins the
original repository at a commit; derived files (joins, samples, conversions) have no URL and can
only be mirrored from a staged folder.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DataFile:
    """One file of a data set; ``transform`` turns the downloaded bytes into the staged content."""

    dataset: str
    path: str
    required: bool
    size: int | None  # bytes of the uncompressed content
    sha256: str | None  # of the .gz as staged in shared/data
    raw_sha256: str | None  # of the uncompressed content
    url: str | None = None
    transform: str | None = None  # None | "gunzip" | "lf_to_crlf"
    url_sha256: str | None = None  # of the downloaded bytes, when they differ from the content
    verify_raw: bool = False  # always check the uncompressed content, even when the .gz matches
    note: str = ""


def _url(source: tuple[str, str], path: str) -> str:
    repo, commit = source
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


_f = DataFile

_TIMER4 = ("qianxinying/TimeR4", "508cc0267e55f24877b136f23f0f3c425f2d37b4")
_MMKB = ("mniepert/mmkb", "dc1c89cac110ddbb9944d6ed5ab2b3c2339d320c")
_EXAQT = ("zhenjia2017/EXAQTV2", "65042af4153d50b14bacc6efd248324f7b6cd35f")
_FTKGQA = ("Jin1c-3/ForecastTKGQA", "2431ca0f91af8ad483f8955382bcac11d39629dc")
_ZRLLM = ("ZifengDing/zrLLM", "403587393a10b54a93cce6977a29892ecac4be30")
_TSQA = ("wenhuchen/Time-Sensitive-QA", "38b05989070c1168b2bef3d5a2656afeeba763dc")
_DYG_RAG_DATA = ("Vera-zero/Test_RAG_LOCAL", "d63979a25f066db4128642a7c5610f6e6a3c5fbc")
_DYG_RAG = ("RingBDStack/DyG-RAG", "6a156aa7c7c101259746cf74fcdec0eef01b35db")

FILES: tuple[DataFile, ...] = (
    _f(
        "multitq",
        "multitq/kg/full.txt",
        required=True,
        size=31_497_626,
        sha256="942141a225853e5a0cc0a79fd407d00234c33781923e96b1c090c48714947b98",
        raw_sha256="b94b31a86dc9f8dd40c8a95ec5c224f85a9a0793df0d40efad710cfda2f3944e",
        url=_url(_TIMER4, "datasets/MultiTQ/kg/full.txt"),
        transform="lf_to_crlf",
        url_sha256="e5cfd92e9392728f45f8584442aa6f0abf916d253490f280782b9f602f4998a1",
        verify_raw=True,
        note="reconstructed, byte-identical to MultiTQ kg/full.txt; TimeR4 has it with LF ends",
    ),
    _f(
        "multitq",
        "multitq/kg/entity2id.json",
        required=True,
        size=343_771,
        sha256="931f66363ac4243b87d31146006a7271a621842f19d606db8fc827d625b188ed",
        raw_sha256="50529c68e783dbc684eb2dfe249df6f5d49bf571cd24000e9aaad747b7f130bf",
        url=_url(_TIMER4, "datasets/MultiTQ/kg/entity2id.json"),
    ),
    _f(
        "multitq",
        "multitq/kg/relation2id.json",
        required=True,
        size=9_525,
        sha256="2ddbc7f01c5141c843436fc9f477066bc604a0583d7396542fa79c4a59a208df",
        raw_sha256="4b655249097806633197ce996460c67cda688f560b460fc31a07028c954b8671",
        url=_url(_TIMER4, "datasets/MultiTQ/kg/relation2id.json"),
    ),
    _f(
        "multitq",
        "multitq/kg/ts2id.json",
        required=True,
        size=79_230,
        sha256="fdf0272f49dab5a6ef27ac73c0f0e132e11ef9d531c9d7ff39bbeb6089582104",
        raw_sha256="f7e6cf043f28b7c76ea4d5f0f5471ed1cb57235fd3280b729deb452e498b3378",
        url=_url(_TIMER4, "datasets/MultiTQ/kg/ts2id.json"),
    ),
    _f(
        "multitq",
        "multitq/kg/icews05-15_valid.txt",
        required=False,
        size=3_119_589,
        sha256="2ba44b6a54d8d3bd55aea2ebee4b72e679e7a56ca10e35368261995293e2550b",
        raw_sha256="404516f2da966c563ab6d81f1355ec5c67a9aa77c111bf712429e65136162b23",
        url=_url(_MMKB, "TemporalKGs/icews05-15/icews_2005-2015_valid.txt"),
        note="Garcia-Duran random split",
    ),
    _f(
        "multitq",
        "multitq/kg/icews05-15_test.txt",
        required=False,
        size=3_103_913,
        sha256="67862f0fb2c1ba318be01919336094400549cfb832c757916d90314819556c74",
        raw_sha256="d034cd94ace08279639526cbe2ce34829562941ddd1301e6afa9e0ffa7a5b160",
        url=_url(_MMKB, "TemporalKGs/icews05-15/icews_2005-2015_test.txt"),
        note="Garcia-Duran random split",
    ),
    _f(
        "multitq",
        "multitq/questions/test_sample_shared.json",
        required=True,
        size=265_314,
        sha256="52758f39975dbfa8385b367993044f4ea98c28ddea84c754199ef97594bad587",
        raw_sha256="ed252947b001c31c39b828268a1ebfa26ac1f9973b19115cd9e2b36f5d90a91c",
        note="derived: 954 of a 1,910-question test sample",
    ),
    _f(
        "cronquestions",
        "cronquestions/kg/wd_id2entity_text.txt",
        required=True,
        size=3_313_731,
        sha256="9838844e8b318134980afb5ad804d3e1172f1ca11f1b0ef00b4eab75c9cb296d",
        raw_sha256="037a21162902fdd20b81ab4775fa8b43784e4134b9228fc02002c35c4260a4d5",
        url=_url(_TIMER4, "datasets/TimeQuestions/kg/wd_id2entity_text.txt"),
    ),
    _f(
        "cronquestions",
        "cronquestions/kg/wd_id2relation_text.txt",
        required=True,
        size=4_198,
        sha256="e69888461389517ddb733fdd8f6343c6b03b824e238ecbcd4f49b0fe904bb464",
        raw_sha256="b8f692d22b0d089d259287d058c3a8521a3a096d68f3082b85bc11209bc87c8a",
        url=_url(_TIMER4, "datasets/TimeQuestions/kg/wd_id2relation_text.txt"),
    ),
    _f(
        "cronquestions",
        "cronquestions/questions_complex/valid.jsonl",
        required=True,
        size=2_188_421,
        sha256="b4eeaee76756865859ed9dca243c7827d8ae070882aa02f58f1d39636edf1299",
        raw_sha256="68ff16e36a2d0a88b7503973c6d540ca42e0114c5b770d6f113cf3a2bde23dac",
        note="converted pickle->JSONL from czy1999/SubGTR@b56b77d1 ComplexCronQuestions/valid.pickle",
    ),
    _f(
        "timequestions",
        "timequestions/questions/dev.json",
        required=True,
        size=2_684_449,
        sha256="f97239a1349d5e2ff59b9f93c1222079070b16361dc19e41750820a773e4f7a3",
        raw_sha256="d074316aeeb629ead6f7cb7ebed36ab7aff95a081de567e6ede4db3a56892d34",
        url=_url(_EXAQT, "_benchmarks/timequestions/dev.json"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21/valid.txt",
        required=True,
        size=969_880,
        sha256="007da550e1e67abedd0b8428616a74558dfde31180003c26c758bdd18456f401",
        raw_sha256="d91cb7eb6f8db3f6b82295889192bc9c5e08e03ff395e097cd0f4e0dc8eb6604",
        url=_url(_FTKGQA, "Data/ICEWS21_processed/valid.txt"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21/test.txt",
        required=True,
        size=897_405,
        sha256="6e7b0e888b6ce67f74cbdaab83caac6eaac5c5ee06e756d22e3ef0e4df42513b",
        raw_sha256="3f07f003919af21efdebee02232df5793973d8e3da3c2a729374cf782fdf7eb7",
        url=_url(_FTKGQA, "Data/ICEWS21_processed/test.txt"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21/mapping/entity2id.txt",
        required=True,
        size=612_610,
        sha256="d1acfa888012b973245529571ca44e93a86f4d106358458a4d68451638077294",
        raw_sha256="f8d284e971da9f0e8bca4bdaf52c548e9c171c127f02d437726a6c9c69499ca6",
        url=_url(_FTKGQA, "Data/ICEWS21_processed/mapping/entity2id.txt"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21/mapping/relation2id.txt",
        required=True,
        size=8_629,
        sha256="1be24cafa132f8e7d46b2a417cd6d496790e23531725280fe8b613e7dd68e420",
        raw_sha256="faf6b316c5f51d210e80241f9c626945206de36f9842edbd3556c300163104db",
        url=_url(_FTKGQA, "Data/ICEWS21_processed/mapping/relation2id.txt"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21/mapping/ts2id.txt",
        required=True,
        size=3_535,
        sha256="bd61e8ac6e2e7fc358c9fb46e24b01312f052f094cf1f69c026d85a233f7d4f2",
        raw_sha256="3fa470251384e90980a8a3522981d5acb34833fb2c7fbdb73ea8d8bb73dfe554",
        url=_url(_FTKGQA, "Data/ICEWS21_processed/mapping/ts2id.txt"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21/mapping/wd_id2entity_text.txt",
        required=True,
        size=633_186,
        sha256="c8c9df4dabf4acf5e51beeb75f36a310dc3e234d3b4f868da6185c5fa5912e7b",
        raw_sha256="6d80502cd6b5da596be1fd1ed89ccd98ed33517c18d794c81d3dba2a6902844d",
        url=_url(_FTKGQA, "Data/ICEWS21_processed/mapping/wd_id2entity_text.txt"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21/mapping/wd_id2relation_text.txt",
        required=True,
        size=8_883,
        sha256="2bd61823a94a1cc835776fa8ffb26b9b7656a8269ffd95c13e35e1a9ffe69e45",
        raw_sha256="139207885006b5cdd6d39ea09d08a750bf2e0e71dcec420e017ddf51a8e9ddfd",
        url=_url(_FTKGQA, "Data/ICEWS21_processed/mapping/wd_id2relation_text.txt"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21_zrllm/train.forecasttkgqa_ids.txt",
        required=True,
        size=5_536_971,
        sha256="66ab422c37b4c069b1e33046e8d6b363999a6807a2caa44329d9cb969a2fe8d9",
        raw_sha256="5e5353a14c1329c4369596795aad5a379137be70908110480953b3d8f981d12a",
        note="derived: zrLLM train re-encoded into ForecastTKGQA ids (stand-in for the missing train split)",
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21_zrllm/train.txt",
        required=False,
        size=4_190_625,
        sha256="f46f1b0dbef7cc8dfd50533c52b96e2afe9984fef8333ccdc379189f3f765d13",
        raw_sha256="8941ddbb7804455406ff7eaf1a2f4b7739e16195ae1617b6d27f47e6c1eaa85b",
        url=_url(_ZRLLM, "data/ICEWS21/train.txt"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21_zrllm/valid.txt",
        required=False,
        size=1_349_095,
        sha256="228590909bb6532c2295a48251c75f750109b03531a62217069eff48c202d2b3",
        raw_sha256="fbad318e27450b33cd654798c35dc904efdffbeb0bf3907d8e7013fef6edc812",
        url=_url(_ZRLLM, "data/ICEWS21/valid.txt"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21_zrllm/test.txt",
        required=False,
        size=26_006,
        sha256="e49ce61bbe31898e2a8df7476ad3fd03322e50b33baf9e0f3e1ac456a1283e7d",
        raw_sha256="6243bda30dfb0b31be38d9c657f32b8c17f10b1cf8d6d37c2ac85e590f55b28f",
        url=_url(_ZRLLM, "data/ICEWS21/test.txt"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21_zrllm/entity2id.txt",
        required=False,
        size=539_819,
        sha256="9c5d9f33d9476b0a07c862f54e69ade9fc9712909c5311e9bd64e395929b7e2c",
        raw_sha256="1abd802d296aeccbdf4893122e1ce7a09ccd74f19dc443d8bcb4abbaad3b3811",
        url=_url(_ZRLLM, "data/ICEWS21/entity2id.txt"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21_zrllm/relation2id.txt",
        required=False,
        size=8_630,
        sha256="c9cc2576b168b9fb57eec814b9adfd2361231e08f0f432b6715e039ba6319ad0",
        raw_sha256="620327e35cbc14d35b09e130d35e453ca3f8402968966e8adda22e075569d767",
        url=_url(_ZRLLM, "data/ICEWS21/relation2id.txt"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21_zrllm/relation_explanation.txt",
        required=False,
        size=47_252,
        sha256="5965914388f68b7e9ba21e41a74b6e26f50caaa84107acd26d9dd8a001e2ea92",
        raw_sha256="e4b7b711113f4efc6e2c328c10b3c4450e1ecc9428168654d1ac6ae05cc893e2",
        url=_url(_ZRLLM, "data/ICEWS21/relation_explanation.txt"),
    ),
    _f(
        "forecasttkgquestions",
        "forecasttkgquestions/icews21_zrllm/stat.txt",
        required=False,
        size=13,
        sha256="1da4928ce692bea719c55cd2bd1e059122f8ec594f15736d78a69ec62ed8c5f8",
        raw_sha256="0db2bc59e3b81579c188c1424edb0b341cd8e98602b091e080eb69344c3fab84",
        url=_url(_ZRLLM, "data/ICEWS21/stat.txt"),
    ),
    _f(
        "timeqa",
        "timeqa/human_annotated_train.json",
        required=True,
        size=4_064_336,
        sha256="8e15b0db55c4602b30f6c6db914b90800508941e808667661f7a2cd366db0cc5",
        raw_sha256="99eec0514569ecbdea087ae3751a1e7d5ae0e45fcf82f9b4e9226f30967939b5",
        url=_url(_TSQA, "dataset/human_annotated_train.json"),
    ),
    _f(
        "timeqa",
        "timeqa/human_train.easy.jsonl",
        required=True,
        size=26_705_194,
        sha256="da3a267e566316995c43ce4595f281f2ad7d77d095ef772631dd677a6b4ef707",
        raw_sha256="3117e818edd7dcd8483eefca726acb4ee54246a9ebf544b573fe43a68848d8fe",
        url=_url(_TSQA, "dataset/human_train.easy.json.gzip"),
        transform="gunzip",
    ),
    _f(
        "timeqa",
        "timeqa/human_train.hard.jsonl",
        required=True,
        size=26_705_589,
        sha256="d37712c9ac73f193f618b3e392431348fdf1c00db10e52bdb5874d645067b0d9",
        raw_sha256="a1e3763898ee202f0883d18bb91b22b36743cf648fce8a9a07e7b4579d3057ad",
        url=_url(_TSQA, "dataset/human_train.hard.json.gzip"),
        transform="gunzip",
    ),
    _f(
        "timeqa",
        "timeqa/timebench/contexts_test_sample.jsonl",
        required=True,
        size=1_122_244,
        sha256="775df734e84c83f6c39faa5f9677922ac9b3e919f9c5cdcbf0ca87cd35d58e1f",
        raw_sha256="3e78a602cfac2f04c4cf382ea166adaeb93a8b05db9aca6b720db6c51f8c695c",
        note="derived: distinct contexts of zchuz/TimeBench@e7fd6722 timeqa_{easy,hard}_500",
    ),
    _f(
        "timeqa",
        "timeqa/dyg_rag/statistics.json",
        required=False,
        size=2_697,
        sha256="820bee5ae4928d59e3376b825754e433e8efdb56283dd84c1e8bd7623670a14b",
        raw_sha256="96b7598d1e9e417e7a0717b910757df32bd25242930b18cd7e8e883fba706eb7",
        url=_url(_DYG_RAG_DATA, "datasets/TimeQA/statistics.json"),
    ),
    _f(
        "tempreason",
        "tempreason/test_l1.shared_half.jsonl",
        required=True,
        size=236_164,
        sha256="4ffe55863496cdaec0799ab142308d41114d32565345c4cf72285a7b840005b9",
        raw_sha256="e866a513c3ba2a6c7aa32f2dfdc05994dff10e8d1414de960092f6358f559bec",
        note="derived: shared half of sachinbellamkonda/TempReason_Llama@53302d32 test CSVs",
    ),
    _f(
        "tempreason",
        "tempreason/test_l1_future.shared_half.jsonl",
        required=True,
        size=124_384,
        sha256="a77cd461b128d561f8ebe747102d6ca0ab45af6d90cdb1369375f6c8e4b1574a",
        raw_sha256="d9ed3dc972d92bff08eb7ffada105b48c54757155dc6c86c222d9c8453d20cf7",
        note="derived: shared half of sachinbellamkonda/TempReason_Llama@53302d32 test CSVs",
    ),
    _f(
        "tempreason",
        "tempreason/test_l2.shared_half.jsonl",
        required=True,
        size=375_580,
        sha256="8010993545aa488597818b93b8432d020de760629d615bb59ea155d6a977130c",
        raw_sha256="6d83e2148e9543b5ed3fa2f61a49bc8cbc8b0fb15f8bc5e2c1ec6140e8d05162",
        note="derived: shared half of sachinbellamkonda/TempReason_Llama@53302d32 test CSVs",
    ),
    _f(
        "tempreason",
        "tempreason/test_l3.shared_half.jsonl",
        required=True,
        size=347_338,
        sha256="339b75a1379087d01336e68c5ed19557351ddec8f854a40e9c3e1787ade0da0d",
        raw_sha256="f1ef05b8991bb979fcde55ae2674b2c3d02f4115bb5421dfe6b1574825915bb9",
        note="derived: shared half of sachinbellamkonda/TempReason_Llama@53302d32 test CSVs",
    ),
    _f(
        "tempreason",
        "tempreason/ids/test_l2.shared_half.ids.jsonl",
        required=True,
        size=386_519,
        sha256="1d7f769fd2e07f75446e2ef1eab307b859e5af916237086f00ef4e12813ea7e9",
        raw_sha256="d951e776795966adcbb4858a9a6d876da51d4cb7fd53ca8cd5e409d4132d4072",
        note="derived join",
    ),
    _f(
        "tempreason",
        "tempreason/ids/test_l3.shared_half.ids.jsonl",
        required=True,
        size=142_875,
        sha256="c43b2ee6945a32b3b9b7d921f63666f2c7308827d93e385dc2da2d59aa95d005",
        raw_sha256="3a1930c8c3894cf29909ca6650cb89505bf6916b997e0a94e2a075b0ab47ed3c",
        note="derived join",
    ),
    _f(
        "tempreason",
        "tempreason/timebench_context/test_l2.shared_half.with_context.jsonl",
        required=True,
        size=1_444_771,
        sha256="3ac9e473e4e76f73271543cf5302b4e9b5771d4dd96609bb5a256a3638d5965b",
        raw_sha256="4a7d9ab1a60048e4a892051dbb6a0c5a61bb9ee5fae7c47f540645f9bbb86267",
        note="derived join with TimeBench",
    ),
    _f(
        "tempreason",
        "tempreason/timebench_context/test_l3.shared_half.with_context.jsonl",
        required=True,
        size=1_230_633,
        sha256="38487c46e6581178694e97fbe5808d730da6be2c8fb46527affa0db8e38ad837",
        raw_sha256="5233ec77b6076164617bcf03428da17c6cfe5ef116dee93e310da36b1e411674",
        note="derived join with TimeBench",
    ),
    _f(
        "tempreason",
        "tempreason/timebench_context/corpus_docs.jsonl",
        required=True,
        size=1_650_879,
        sha256="66b8e3a286fd3b2a63b5269b53953bc156de65cb3f6b93b0c8b704a89b98699e",
        raw_sha256="3ed267dec729abd5062f330061ab127497d717c09ccd8572863f06b20843a96d",
        note="derived: TimeBench documents",
    ),
    _f(
        "tempreason",
        "tempreason/dyg_rag/statistics.json",
        required=False,
        size=391,
        sha256="9e6db2c4d003a36c78a148e56bf80053f8683dabce5c1774da57c8cf55a622b2",
        raw_sha256="113de05d1c65b22e767af82614e1c12a410b4c347c77ac3a97a04bdce24e105d",
        url=_url(_DYG_RAG_DATA, "datasets/TempReason/statistics.json"),
    ),
    _f(
        "complextr",
        "complextr/dyg_rag/Corpus.json",
        required=True,
        size=1_118_416,
        sha256="7279b1924226bb695ef896b5c0f955c8cd59c852f741030a8564c04bc29ba2a4",
        raw_sha256="6584d6bf0eac61d339a8e04e3841ed80f8f5c047e5691dbf72e0fa3ce90345ff",
        url=_url(_DYG_RAG_DATA, "datasets/ComplexTR/Corpus.json"),
    ),
    _f(
        "complextr",
        "complextr/dyg_rag/Question.shared_half.json",
        required=True,
        size=26_301,
        sha256="4774630c3256bcae52f76c3da5f0ce59aa408e038b8604f1694b42ac99eb4d0a",
        raw_sha256="1fa0a7212b46a29067c17d8af101f24eb573e72c9a8657dba93d40beb6da1016",
        note="derived: seeded half of DyG-RAG's datasets/ComplexTR/Question.json",
    ),
    _f(
        "complextr",
        "complextr/dyg_rag/statistics.json",
        required=False,
        size=3_465,
        sha256="9d05877bc5cd2a9750e087a8e4f626db0920ae9913d64fc1db606f269c009edc",
        raw_sha256="61936d8f55889b573baabb2c1d15d74f409d76927ffa85f53dc8b3f7dc26615f",
        url=_url(_DYG_RAG_DATA, "datasets/ComplexTR/statistics.json"),
    ),
    _f(
        "dyg-rag",
        "dyg-rag/demo_Corpus.json",
        required=True,
        size=30_198,
        sha256="2ee8446c374a6be0edb599be7393cb9fecf7748bcdf122b3a1aba7c4c3718e48",
        raw_sha256="07b27d3a5703040d94a60a452bee42e8a33e7fda8656b935e366579223fcbfbf",
        url=_url(_DYG_RAG, "demo/Corpus.json"),
    ),
    # Known but not staged anywhere reachable: the CronQuestions KG (data_v2.zip on Google Drive,
    # linked from apoorvumang/CronKGQA's README).  Listed so that `check` reports it as absent.
    _f(
        "cronquestions",
        "cronquestions/kg/full.txt",
        required=False,
        size=None,
        sha256=None,
        raw_sha256=None,
        note="CronKGQA data_v2.zip (Google Drive); quintuples head, relation, tail, start_year, end_year",
    ),
)

DATASETS: tuple[str, ...] = tuple(dict.fromkeys(f.dataset for f in FILES))
# MultiTQ's full.txt must match this on its uncompressed content (the Git LFS pointer of the original).
MULTITQ_FULL_SHA256 = "b94b31a86dc9f8dd40c8a95ec5c224f85a9a0793df0d40efad710cfda2f3944e"


def files(dataset: str | None = None) -> list[DataFile]:
    """Entries of one data set (all when None); unknown names raise KeyError listing the known ones."""
    if dataset is None or dataset == "all":
        return list(FILES)
    if dataset not in DATASETS:
        raise KeyError(f"unknown data set {dataset!r}; known: {', '.join(DATASETS)}")
    return [f for f in FILES if f.dataset == dataset]


def entry(path: str) -> DataFile:
    """The entry of a relative path (with or without ``.gz``)."""
    key = path[:-3] if path.endswith(".gz") else path
    for f in FILES:
        if f.path == key:
            return f
    raise KeyError(f"{path!r} is not a known data file")
