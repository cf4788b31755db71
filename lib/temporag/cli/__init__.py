"""`temporag` command line: run notebooks in batch, fetch and check data, compare two runs' results."""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

from temporag import __version__


def _parse_param(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"-p expects key=value, got {text!r}")
    key, raw = text.split("=", 1)
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    return key.strip(), value


#: what Ctrl-C during ``reproduce`` keeps (runner: a run is published only when it finished)
INTERRUPTED = (
    "interrupted (Ctrl-C): notebooks reported finished above are published; each one still running keeps "
    "its last complete run, nothing half-written is published — run the same command again to resume"
)
#: what SIGTERM (``kill PID``) during ``reproduce`` stopped and kept (:mod:`temporag.run.terminate`)
TERMINATED = (
    "terminated (SIGTERM): stopped {stopped} before finishing; notebooks reported finished above are "
    "published, each one stopped keeps its last complete run and its staging folder was removed — run the "
    "same command again to resume"
)


def _cmd_reproduce(args) -> int:
    from temporag import batch  # lazy: keeps `temporag --help` fast
    from temporag.batch.dask_engine import SchedulerUnreachable  # lazy: keeps `temporag --help` fast
    from temporag.batch.grid import GridError, expand  # lazy: keeps `temporag --help` fast
    from temporag.run import oserrors, runner, terminate  # lazy: keeps `temporag --help` fast
    from temporag.run import summary as run_summary  # lazy: as the line above

    notebook_dir = Path(args.notebook_dir).resolve() if args.notebook_dir else runner.NOTEBOOK_DIR
    runs_dir = Path(args.runs_dir).resolve() if args.runs_dir else runner.RUNS_DIR
    where = {"notebook_dir": notebook_dir, "figures_dir": runner.FIGURES_DIR, "runs_dir": runs_dir}
    options = {"force": args.force, "kernel": args.kernel, "wait_s": args.wait}
    if args.grid:
        if args.notebook or args.param or args.profile:
            print(
                "--grid names the notebooks, profiles and parameters itself: drop -n/-p/--profile, or put "
                "them in the grid file",
                file=sys.stderr,
            )
            return 2
        try:
            jobs = expand(args.grid, **where, **options)
        except GridError as exc:
            print(exc, file=sys.stderr)
            return 2
    else:
        names = args.notebook or runner.available_notebooks(notebook_dir)
        missing = [n for n in names if not runner.notebook_path(n, notebook_dir).exists()]
        if missing:
            print(
                f"no such notebook(s): {missing}; available: {runner.available_notebooks(notebook_dir)}",
                file=sys.stderr,
            )
            return 2
        jobs = batch.plan(names, args.profile or "smoke", dict(args.param or []), **where, **options)
    how = f"{args.engine} engine" + (f" at {args.address}" if args.address else "")
    print(f"{len(jobs)} job(s), {args.jobs} at a time, {how}", flush=True)
    printer = batch.Printer(len(jobs))

    def finished() -> str:  # the summary of the jobs that ended, when the batch itself could not
        done = [printer.finished[i] for i in sorted(printer.finished)]
        return f"\n{run_summary.summary(done)}" if done else ""

    try:
        with terminate.as_interrupt():  # SIGTERM (kill PID) stops and cleans up like Ctrl-C
            outcomes = batch.run(
                jobs,
                engine=args.engine,
                n_jobs=args.jobs,
                address=args.address,
                worker_cache=args.worker_cache,
                printer=printer,
            )
    except ImportError as exc:
        if exc.name not in ("dask", "distributed"):
            raise
        print(f"the {args.engine} engine needs {exc.name}: pip install -e '.[batch]'", file=sys.stderr)
        return 2
    except SchedulerUnreachable as exc:
        print(exc, file=sys.stderr)
        return 2
    except OSError as exc:  # not a job's (the runner names those in its outcome): say what and where
        print(finished())
        print(f"temporag reproduce: {oserrors.describe(exc)}", file=sys.stderr)
        return 2
    except terminate.Terminated:  # what it stopped, and that nothing half-written was kept
        print(finished())
        stopped = [job.label for i, job in enumerate(jobs) if i not in printer.finished]
        print(TERMINATED.format(stopped=", ".join(stopped) or "nothing"), file=sys.stderr)
        return terminate.EXIT
    except KeyboardInterrupt:  # one line, not the traceback of every frame it came through
        print(finished())
        print(INTERRUPTED, file=sys.stderr)
        return 130
    print()
    print(run_summary.summary(outcomes))
    incomplete = [o.name for o in outcomes if o.status == "incomplete"]
    if incomplete:
        print(
            f"\n{len(incomplete)} notebook(s) incomplete (LLM answers missing): {', '.join(incomplete)} — "
            "run the same command again once the endpoint answers; only the missing calls are sent",
            file=sys.stderr,
        )
    failed = [o.name for o in outcomes if o.status == "failed"]
    if failed:
        print(f"\n{len(failed)} notebook(s) failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed or incomplete else 0


def _cmd_list(args) -> int:
    from temporag.methods.registry import declarations  # lazy: keeps `temporag --help` fast
    from temporag.run import runner  # lazy: keeps `temporag --help` fast

    for name in runner.available_notebooks():
        declared = declarations(name)
        print(f"\n{name}  (notebooks/{name}.ipynb; -p NAME=VALUE, None: the profile's default)")
        for line in declared.table() if declared is not None else ["  parameters not declared"]:
            print(f"  {line}")
    return 0


def _cmd_warm(args) -> int:
    from temporag.retrieval.warm import warm_multitq  # lazy: keeps `temporag --help` fast

    seconds = warm_multitq(profile=args.profile)
    print("warm: " + ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items()))
    return 0


def _cmd_index(args) -> int:
    from temporag.batch.index import build_index  # lazy: keeps `temporag --help` fast
    from temporag.run import runner  # lazy: keeps `temporag --help` fast

    runs_dir = Path(args.runs_dir).resolve() if args.runs_dir else runner.RUNS_DIR
    out = Path(args.out).resolve() if args.out else runs_dir / "index"
    page = build_index(out, figures_dir=runner.FIGURES_DIR, runs_dir=runs_dir)
    print(f"index of executed notebooks: {page}")
    return 0


def _cmd_book(args) -> int:
    from temporag.batch.book import build_book, summary  # lazy: keeps `temporag --help` fast
    from temporag.run import runner  # lazy: keeps `temporag --help` fast

    runs_dir = Path(args.runs_dir).resolve() if args.runs_dir else runner.RUNS_DIR
    out = Path(args.out).resolve() if args.out else runs_dir / "book"
    print(summary(build_book(out, figures_dir=runner.FIGURES_DIR, runs_dir=runs_dir)))
    return 0


def _cmd_claims(args) -> int:
    from temporag.batch import scorecard  # lazy: keeps `temporag --help` fast
    from temporag.run import runner  # lazy: keeps `temporag --help` fast

    committed = sorted(p.parent for p in runner.FIGURES_DIR.glob("*/results.json"))
    paths = [Path(p) for p in args.runs] or committed
    judged, rc = [], 0
    for path in paths:
        try:
            run = scorecard.judge_run(path)
        except scorecard.NoRecords as exc:
            print(f"claims: {exc}", file=sys.stderr)
            rc = 1
            continue
        if run.rows:
            judged.append(run)
    comparing = len(judged) == 2 and judged[0].notebook == judged[1].notebook
    if not comparing:
        judged = scorecard.across_runs(judged)
    if args.json:
        print(json.dumps([{"notebook": r.notebook, "path": str(r.path), "rows": r.rows} for r in judged],
                         indent=2, default=str))
        return rc
    if comparing:
        first, second = judged
        rows = scorecard.side_by_side(first, second)
        print(f"{first.notebook}: 1 = {first.path} ({first.questions})")
        print(f"{' ' * len(first.notebook)}  2 = {second.path} ({second.questions})")
        shown = [{**r, "changed": "CHANGED" if r["changed"] else "",
                  "effect 1": scorecard._num(r["effect 1"]), "effect 2": scorecard._num(r["effect 2"])}
                 for r in rows]
        columns = ["claim", "verdict 1", "effect 1", "n 1", "verdict 2", "effect 2", "n 2", "changed"]
        print(scorecard.text_table(shown, columns))
        print(f"\n{sum(r['changed'] for r in rows)} of {len(rows)} verdicts changed.")
    else:
        for run in judged:
            print(f"\n{run.notebook}  ({run.path}, profile {run.profile}, questions {run.questions})")
            lines = scorecard.verdict_lines(run)
            print(scorecard.text_table(lines, list(lines[0])))
            for row in run.rows:
                if row["note"]:
                    print(f"  {row['claim']}: {row['note']}")
        print("\n" + scorecard.chance_summary(judged))
    print("\n" + scorecard.RULE.replace("**", "").replace("*", ""))
    return rc


def _cmd_cache(args) -> int:
    from temporag.batch.cachesync import merge_cache_dirs  # lazy: keeps `temporag --help` fast
    from temporag.config import get_settings  # lazy: keeps `temporag --help` fast

    into = Path(args.into).expanduser() if args.into else get_settings().cache_dir
    for source in args.source:
        counts = merge_cache_dirs(Path(source).expanduser(), into)
        print(
            f"{source} → {into}: {counts['llm_rows']} LLM responses, {counts['files']} cache files added "
            f"({counts['skipped']} entries left out, each named above)"
        )
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number ≥ 1, got {text}")
    return value


def _batch_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs",
        "-j",
        type=_positive,
        default=1,
        metavar="N",
        help="run N notebooks at once (local: N processes; dask without --address: N workers)",
    )
    parser.add_argument(
        "--engine",
        choices=["local", "dask"],
        default="local",
        help="local: this machine; dask: a Dask distributed cluster (see --address)",
    )
    parser.add_argument(
        "--address",
        default=None,
        help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (default: a local cluster)",
    )
    parser.add_argument(
        "--worker-cache",
        choices=["shared", "local"],
        default="shared",
        help="dask: workers share TEMPORAG_CACHE (a shared file system, the default), or each "
        "keeps its own and new LLM answers are merged back here after every job",
    )
    parser.add_argument("--notebook-dir", default=None, help="folder of notebooks (default: notebooks/)")
    parser.add_argument(
        "--runs-dir", default=None, help="folder of every run but the committed ones (default: runs/)"
    )


def _print_checks(results) -> int:
    from temporag.data import catalog  # lazy: keeps `temporag --help` fast
    from temporag.data import fetch as fetch_mod  # lazy: keeps `temporag --help` fast

    bad = 0
    for r in results:
        mark = "ok " if r.ok else "BAD"
        where = r.found or "-"
        print(f"{mark} {r.status:<10} {r.dataset:<22} {r.path:<55} {where} {r.message}".rstrip())
        if r.status == "mismatch":
            print(f"      expected sha256 {r.expected}\n      actual   sha256 {r.actual}")
        if r.status == "mismatch" or (r.status == "missing" and r.required):
            print(f"      get it: {fetch_mod.how_to_get(catalog.entry(r.path))}")
        bad += not r.ok
    print(f"{len(results) - bad} of {len(results)} files fine" + (f", {bad} need attention" if bad else ""))
    return 1 if bad else 0


def _cmd_data(args) -> int:
    from temporag.data import fetch as fetch_mod  # lazy: keeps `temporag --help` fast

    if args.action == "check":
        return _print_checks(fetch_mod.check(args.dataset, data_dir=args.data_dir))
    try:
        results = fetch_mod.fetch(args.dataset, dest=args.dest, source_dir=args.source, copy=args.copy)
    except (fetch_mod.FetchError, fetch_mod.ChecksumError) as exc:
        print(f"fetch failed: {exc}", file=sys.stderr)
        return 1
    return _print_checks(results)


def _cmd_results(args) -> int:
    from temporag.run.results_diff import compared_paths, diff  # lazy: keeps `temporag --help` fast

    try:
        found = diff(
            args.old,
            args.new,
            rel_tol=args.tolerance,
            ignore=tuple(args.ignore or ()),
            ignore_added=args.ignore_added,
        )
        compared = compared_paths(args.old)
    except (FileNotFoundError, ValueError) as exc:
        print(f"results diff: {exc}", file=sys.stderr)
        return 2
    for difference in found:
        print(difference)
    verdict = f"{len(found)} difference(s)" if found else "no differences"
    print(f"{verdict} in {compared} compared values of {args.old} (timings excepted)")
    return 1 if found else 0


def _cmd_score(args) -> int:
    import pandas as pd

    from temporag.leaderboard import submission  # lazy: keeps `temporag --help` fast
    from temporag.notebook.outputs import FIGURES_DIR  # lazy: keeps `temporag --help` fast

    kit = None if args.no_kit else Path(args.leaderboard or FIGURES_DIR / "leaderboard" / "results.json")
    try:
        rows, by_category = submission.score_file(
            args.predictions, split=args.split, questions_file=args.questions_file, leaderboard_results=kit
        )
    except submission.PredictionsError as exc:
        print(exc, file=sys.stderr)
        return 2
    with pd.option_context("display.max_columns", None, "display.width", 200):
        print(submission.display_table(rows).to_string(index=False))
        print("\nstrict Hits@1 by category (mean [95% interval]):")
        print(submission.breakdown_table(by_category).to_string(index=False))
    if args.out:
        out = {"rows": rows.to_dict("records"), "breakdown": by_category.to_dict("records")}
        Path(args.out).write_text(json.dumps(out, indent=1, default=float), encoding="utf-8")
    return 0


def _cmd_costs(args) -> int:
    import pandas as pd

    from temporag.config import DEFAULT_LLM_CONCURRENCY, get_settings  # lazy: keeps `temporag --help` fast
    from temporag.llm import costs  # lazy: keeps `temporag --help` fast
    from temporag.run import runner  # lazy: keeps `temporag --help` fast

    paths = [Path(p) for p in args.results] or costs.default_paths(runner.FIGURES_DIR)
    if not paths:
        print(f"no results.json given and none under {runner.FIGURES_DIR}", file=sys.stderr)
        return 2
    try:
        runs = [costs.read_run(p) for p in paths]
    except ValueError as exc:
        print(f"costs: {exc}", file=sys.stderr)
        return 2
    concurrency = args.concurrency or get_settings().llm_concurrency or DEFAULT_LLM_CONCURRENCY
    rows = costs.cost_table(
        runs, questions=args.questions, seconds_per_call=args.seconds_per_call, concurrency=concurrency
    )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(pd.DataFrame(rows).to_markdown(index=False, disable_numparse=True))
    rate = f"{args.seconds_per_call:g} s per call" if args.seconds_per_call else "each run's own s/call"
    target = f"{args.questions} questions" if args.questions else "every question the run scored"
    print(
        f"\nserved: a served model reading {target} (calls and tokens scale by questions / questions read), "
        f"LLM hours at {rate} (the model's time); wall h: the LLM share of the wall time with {concurrency} "
        "requests in flight (TEMPORAG_LLM_CONCURRENCY / --concurrency), an estimate that holds when the "
        "server batches that many at that s/call (measure s/call at that concurrency)."
    )
    return 0


_WAIT_HELP = (
    "when another run is writing the same output folder, wait up to this long (default: fail at once)"
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="temporag", description=__doc__)
    parser.add_argument("--version", action="version", version=f"temporag {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    rep = sub.add_parser(
        "reproduce",
        help="execute notebooks with papermill (paper profile → figures/<name>/, other runs → runs/...)",
    )
    rep.add_argument("--notebook", "-n", action="append", help="notebook name (repeatable; default: all)")
    rep.add_argument("--profile", choices=["smoke", "paper"], default=None, help="default: smoke")
    rep.add_argument(
        "--grid",
        default=None,
        metavar="FILE",
        help="a TOML grid of notebooks × parameter sets, one output folder per set",
    )
    rep.add_argument(
        "-p",
        "--param",
        action="append",
        type=_parse_param,
        metavar="KEY=VALUE",
        help="notebook parameter (repeatable)",
    )
    rep.add_argument("--force", action="store_true", help="re-run even when outputs are current")
    rep.add_argument("--kernel", default=None, help="Jupyter kernel name (default: the notebook's)")
    rep.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help=_WAIT_HELP)
    _batch_options(rep)
    rep.set_defaults(func=_cmd_reproduce)

    run = sub.add_parser("run", help="run one notebook (same as reproduce --notebook NAME)")
    run.add_argument("notebook", nargs=1)
    run.add_argument("--profile", choices=["smoke", "paper"], default=None, help="default: smoke")
    run.add_argument("-p", "--param", action="append", type=_parse_param, metavar="KEY=VALUE")
    run.add_argument("--force", action="store_true")
    run.add_argument("--kernel", default=None)
    run.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help=_WAIT_HELP)
    _batch_options(run)
    run.set_defaults(func=_cmd_reproduce, grid=None)

    listing = sub.add_parser("list", help="the notebooks, their parameters and each profile's defaults")
    listing.set_defaults(func=_cmd_list)

    index = sub.add_parser("index", help="an HTML index of every executed notebook, to browse offline")
    index.add_argument("--out", default=None, help="folder of the site (default: runs/index)")
    index.add_argument("--runs-dir", default=None, help="folder of the runs to index (default: runs/)")
    index.set_defaults(func=_cmd_index)

    book = sub.add_parser(
        "book", help="the reading-group book: the executed notebooks as a static HTML site, figures inline"
    )
    book.add_argument("--out", default=None, help="folder of the site (default: runs/book)")
    book.add_argument("--runs-dir", default=None, help="folder of the smoke runs it shows (default: runs/)")
    book.set_defaults(func=_cmd_book)

    warm = sub.add_parser("warm", help="embed MultiTQ's facts and names now (what the notebooks share)")
    warm.add_argument(
        "--profile",
        default="smoke",
        choices=["smoke", "paper"],
        help="embed with the backend this profile's runs use (auto: smoke on a CPU → onnx-int8, else torch)",
    )
    warm.set_defaults(func=_cmd_warm)

    cache = sub.add_parser("cache", help="merge another cache folder (e.g. a worker's) into this one")
    cache.add_argument("action", choices=["merge"])
    cache.add_argument("source", nargs="+", help="cache folder(s) to merge from")
    cache.add_argument("--into", default=None, help="cache folder to merge into (default: TEMPORAG_CACHE)")
    cache.set_defaults(func=_cmd_cache)

    data = sub.add_parser("data", help="check or fetch benchmark data")
    data.add_argument("action", choices=["check", "fetch"])
    data.add_argument("dataset", nargs="?", default=None, help="data set name (default: all)")
    data.add_argument("--data-dir", default=None, help="folder to check (default: TEMPORAG_DATA)")
    data.add_argument(
        "--from", dest="source", default=None, help="mirror a local folder instead of downloading"
    )
    data.add_argument("--dest", default=None, help="where to fetch to (default: TEMPORAG_DATA)")
    data.add_argument("--copy", action="store_true", help="copy files instead of symlinking (with --from)")
    data.set_defaults(func=_cmd_data)

    results = sub.add_parser("results", help="compare two runs' results.json")
    results_sub = results.add_subparsers(dest="action", required=True)
    rdiff = results_sub.add_parser(
        "diff", help="list every metric / table value that differs (timings excepted); exit 1 if any"
    )
    rdiff.add_argument("old", help="results.json of the reference run")
    rdiff.add_argument("new", help="results.json of the run to check")
    rdiff.add_argument(
        "--tolerance", type=float, default=1e-6, help="relative tolerance for floats (default: float32 noise)"
    )
    rdiff.add_argument("--ignore", action="append", metavar="REGEX", help="skip paths matching (repeatable)")
    rdiff.add_argument(
        "--ignore-added", action="store_true", help="accept values only the new run has (new metrics/context)"
    )
    rdiff.set_defaults(func=_cmd_results)
    score = sub.add_parser(
        "score", help="score your own predictions file under the leaderboard's protocol, beside the kit's"
    )
    score.add_argument("predictions", help="JSON Lines or list of {quid, answers, evidence_ids?, method?}")
    score.add_argument("--dataset", choices=["multitq"], default="multitq")
    score.add_argument("--split", default="test_sample_shared", help="MultiTQ question split")
    score.add_argument("--questions-file", default=None, help="question file in MultiTQ's format")
    score.add_argument("--leaderboard", default=None, help="leaderboard results.json (default: figures/)")
    score.add_argument("--no-kit", action="store_true", help="score the file's methods alone")
    score.add_argument("--out", default=None, help="write the rows and the breakdown as JSON here")
    score.set_defaults(func=_cmd_score)
    cost = sub.add_parser(
        "costs",
        help="LLM calls, tokens and time per notebook run, and what a served-model paper run will cost",
    )
    cost.add_argument("results", nargs="*", help="results.json files (default: figures/*/results.json)")
    cost.add_argument(
        "--questions", type=_positive, default=None, help="questions the served model reads (default: all)"
    )
    cost.add_argument(
        "--seconds-per-call",
        type=float,
        default=None,
        metavar="S",
        help="your server's seconds per call (the s/call of a smoke run against it; default: each run's own)",
    )
    cost.add_argument(
        "--concurrency",
        type=_positive,
        default=None,
        metavar="N",
        help="requests in flight to the served model (default: TEMPORAG_LLM_CONCURRENCY, else 16)",
    )
    cost.add_argument("--json", action="store_true", help="print the rows as JSON")
    cost.set_defaults(func=_cmd_costs)
    claims = sub.add_parser(
        "claims", help="every claim of the given runs with its verdict (default: the committed figures/)"
    )
    claims.add_argument(
        "runs", nargs="*", help="run folders or results.json files; two runs of one notebook: side by side"
    )
    claims.add_argument("--json", action="store_true", help="print the judged rows as JSON")
    claims.set_defaults(func=_cmd_claims)
    return parser


def main(argv: list[str] | None = None) -> int:
    from temporag.cli.environment import check_environment  # lazy: keeps `import temporag.cli` light
    from temporag.config import SettingError, export_absolute_paths  # lazy: as the line above

    args = build_parser().parse_args(argv)
    export_absolute_paths()  # relative TEMPORAG_DATA / TEMPORAG_CACHE: against the caller's directory
    try:
        check_environment()  # every TEMPORAG_* value, before any kernel starts
    except SettingError as exc:
        print(f"temporag: {exc}", file=sys.stderr)
        return 2
    from temporag.data.errors import DataFormatError, MissingDataError  # lazy: a light import
    from temporag.notebook.owned import NotKitFolder  # lazy: a light import

    try:
        return int(args.func(args) or 0)
    except (MissingDataError, DataFormatError, NotKitFolder) as exc:  # its message names the file and the fix
        print(f"temporag: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted (Ctrl-C): what the command had finished is kept", file=sys.stderr)
        return 130
