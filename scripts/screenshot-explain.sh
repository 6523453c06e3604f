#!/bin/sh
# Regenerates docs/img/explain.png, the screenshot in docs/explain.md: builds ragreedy,
# writes the `explain --html` page of one regression case with ion's allocation under
# ours, and photographs it in headless Chromium with one bar's decisions shown in the
# side box (the page's `#piece=N` address selects it).
#
# Assumes Chromium is installed (on Debian: `apt-get install chromium`); the binary is
# taken from $CHROMIUM, else `chromium`, else `chromium-browser`.
# Usage: scripts/screenshot-explain.sh [CASE.txt] [PIECE]   (run from anywhere)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
case_file=${1:-$root/crates/greedy/tests/cases/loop-pressure.txt}
piece=${2:-5}
browser=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$browser" ]; then
    echo "Chromium not found: install it (apt-get install chromium) or set CHROMIUM" >&2
    exit 1
fi
cd "$root"
cargo build --release --bin ragreedy
bin=${CARGO_TARGET_DIR:-$root/target}/release/ragreedy
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" explain "$case_file" --html "$work/explain.html" --compare ion > "$work/trace.txt"
mkdir -p docs/img
# --no-sandbox: Chromium refuses to run as root with its sandbox (containers, CI).
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1000,620 --screenshot="$root/docs/img/explain.png" \
    "file://$work/explain.html#piece=$piece"
echo "wrote docs/img/explain.png from $case_file"
