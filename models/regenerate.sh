#!/usr/bin/env bash
# Regenerate the reference fits of the bundled datasets with the CLI (make models).
# Writes, per fit, summary.json and leaderboard.csv (and fit.nc, not committed: see
# .gitignore; it is reproducible from this script), the CLI's table, and a comparison
# report (Markdown). tests/test_models.py refits a few of them and compares.
set -euo pipefail
cd "$(dirname "$0")/.."
BR=.venv/bin/bayesrank
OUT=models/arena-2024
mkdir -p "$OUT"

fit() {  # name, then CLI options
  local name=$1; shift
  "$BR" fit arena-2024 "$@" --method map --format table --top 0 --out "$OUT/$name" > "$OUT/$name.txt"
  echo "fitted $name"
}
fit bt-half     --model bt --ties half
fit bt-drop     --model bt --ties drop
fit rk-k0       --model rao-kupper --k-tie 0
fit rk-k1       --model rao-kupper --k-tie 1
fit rk-k1-nested --model rao-kupper --k-tie 1 --tie-intercept
fit dv-k0       --model davidson --k-tie 0
fit dv-k1       --model davidson --k-tie 1
fit dv-k1-nested --model davidson --k-tie 1 --tie-intercept

# the demo: Davidson k_tie=1 by MAP and by NUTS (seeded)
"$BR" demo --out "$OUT" > "$OUT/demo.txt"

.venv/bin/python models/report.py "$OUT" > "$OUT/REPORT.md"
echo "wrote $OUT/REPORT.md"
