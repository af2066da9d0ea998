#!/usr/bin/env bash
# Executes every notebook of notebooks/ top to bottom without a browser and
# writes the executed copies (with their outputs) to results/notebooks/.
#
# Fails (non-zero exit, one line naming the notebook and the cell) when a
# cell raises, and refuses to run at all when a notebook in notebooks/ carries
# outputs or execution counts: notebooks are kept in git without outputs.
#
# Uses .venv/bin/python (scripts/setup.sh creates it from
# notebooks/requirements.txt; it is created here if missing). The notebooks
# find the predict binary through PREDICT_BIN, else target/release/predict.
# Environment: PREDICT_BIN, NOTEBOOK_RESULTS (default results/notebooks),
# NOTEBOOK_TIMEOUT (seconds per cell, default 300).
#
#   bash scripts/notebooks.sh           # check, then execute every notebook
#   bash scripts/notebooks.sh --clear   # strip outputs and execution counts in place
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
case "${1:-}" in
  "") ;;
  --clear) mode=clear ;;
  *) echo "usage: bash scripts/notebooks.sh [--clear]" >&2; exit 2 ;;
esac

py=.venv/bin/python
if [ ! -x "$py" ]; then
  echo "notebooks: creating .venv from notebooks/requirements.txt" >&2
  python3 -m venv .venv
  "$py" -m pip install -q -r notebooks/requirements.txt
elif ! "$py" -c "import nbclient, nbformat, ipykernel, matplotlib, pandas, numpy" 2>/dev/null; then
  echo "notebooks: installing notebooks/requirements.txt into .venv" >&2
  "$py" -m pip install -q -r notebooks/requirements.txt
fi

if [ "$mode" = clear ]; then
  "$py" - <<'PY'
from pathlib import Path

import nbformat

for path in sorted(Path("notebooks").glob("*.ipynb")):
    nb = nbformat.read(path, as_version=4)
    changed = False
    for cell in nb.cells:
        if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count") is not None
                                         or "execution" in cell.metadata):
            cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
            changed = True
    if changed:
        nbformat.write(nb, path)
        print(f"notebooks: cleared {path}")
PY
  exit 0
fi

# The notebooks run on the venv's own interpreter: a "python3" kernel spec
# inside the venv, found first through JUPYTER_PATH.
if [ ! -f .venv/share/jupyter/kernels/python3/kernel.json ]; then
  "$py" -m ipykernel install --sys-prefix --name python3 >/dev/null
fi
export JUPYTER_PATH="$PWD/.venv/share/jupyter${JUPYTER_PATH:+:$JUPYTER_PATH}"

bin=${PREDICT_BIN:-target/release/predict}
if [ ! -x "$bin" ]; then
  echo "notebooks: no predict binary at $bin: run \`cargo build --release\` (or set PREDICT_BIN)" >&2
  exit 1
fi
export PREDICT_BIN="$bin"
export NOTEBOOK_RESULTS="${NOTEBOOK_RESULTS:-results/notebooks}"
mkdir -p "$NOTEBOOK_RESULTS"

"$py" - "$NOTEBOOK_RESULTS" "${NOTEBOOK_TIMEOUT:-300}" <<'PY'
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

out_dir = Path(sys.argv[1])
timeout = int(sys.argv[2])
notebooks = sorted(Path("notebooks").glob("*.ipynb"))
if not notebooks:
    sys.exit("notebooks: no notebooks/*.ipynb found")

# No stale output may be kept in git: check every notebook before running any.
stale = []
for path in notebooks:
    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("outputs") or cell.get("execution_count") is not None:
            stale.append(f"{path} cell {index}")
if stale:
    print("notebooks: FAILED: outputs or execution counts are saved in "
          + ", ".join(stale)
          + " (clear them with `bash scripts/notebooks.sh --clear` before committing)",
          file=sys.stderr)
    sys.exit(1)

def one_line(text):
    return " ".join(str(text).split())


def first_line(source):
    lines = [l for l in source.splitlines() if l.strip()]
    return lines[0].strip()[:60] if lines else ""

failed = False
total = time.monotonic()
for path in notebooks:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            extra_arguments=["--IPKernelApp.log_level=ERROR"],
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.monotonic()
    error = None
    try:
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                try:
                    client.execute_cell(cell, index)
                except CellTimeoutError:
                    error = f"cell {index} ({first_line(cell.source)!r}) timed out after {timeout} s"
                except CellExecutionError as e:
                    error = f"cell {index} ({first_line(cell.source)!r}) raised {e.ename}: {one_line(e.evalue)}"
                if error:
                    break
    except Exception as e:  # the kernel did not start or died
        error = error or f"the kernel failed: {type(e).__name__}: {one_line(e)}"
    nbformat.write(nb, out_dir / path.name)
    took = time.monotonic() - start
    if error:
        print(f"notebooks: FAILED {path}, {error} (partial output in {out_dir / path.name})",
              file=sys.stderr)
        failed = True
        break
    print(f"notebooks: {path} ran in {took:.1f} s -> {out_dir / path.name}")
if failed:
    sys.exit(1)
print(f"notebooks: {len(notebooks)} notebooks ran in {time.monotonic() - total:.1f} s")
PY
