"""Running notebooks: the runner, its papermill engine, publishing, executed-copy tidying, Lab hook."""
