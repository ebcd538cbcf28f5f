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
  "$BR" fit arena-2024 "$@" --method map --format table --top 0 --force --out "$OUT/$name" > "$OUT/$name.txt"
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

# the demo: Davidson k_tie=1 by MAP and by NUTS (seeded), and its HTML report (report.html)
"$BR" demo --force --out "$OUT" > "$OUT/demo.txt"

# leave-one-out comparison of the tie models by NUTS (one held-out point = one pair)
"$BR" compare arena-2024 --models rao-kupper:k_tie=0 rao-kupper:k_tie=1 rao-kupper:k_tie=3 \
  davidson:k_tie=0 davidson:k_tie=1 davidson:k_tie=3 --draws 1000 --tune 1000 --chains 2 --seed 1 \
  --refit none --no-progress --format json > "$OUT/loo-comparison.json"
echo "compared the tie models by LOO"

# GARS of the arena on every pair (pairs never compared: the Davidson k_tie=1 fit's probabilities)
for score in borda bt rank-centrality; do
  "$BR" gars arena-2024 --score "$score" --format json > "$OUT/gars-$score.json"
done
echo "wrote the GARS of arena-2024"

.venv/bin/python models/report.py "$OUT" > "$OUT/REPORT.md"
echo "wrote $OUT/REPORT.md"

# the judge data: reference fits and a report with the leave-one-out comparison
OUTJ=models/mtbench-judges
mkdir -p "$OUTJ"
for spec in "judge-aware" "btl" "judge-aware-signed"; do
  "$BR" fit mtbench-judges --model "$spec" --method map --format table --top 0 --force --out "$OUTJ/$spec" > "$OUTJ/$spec.txt"
  echo "fitted $spec"
done
# HJA with its rank chosen by 5-fold cross-validation (the criteria table heads hja-auto.txt)
"$BR" fit mtbench-judges --model hja --rank auto --method map --format table --top 0 --force \
  --out "$OUTJ/hja-auto" > "$OUTJ/hja-auto.txt"
echo "fitted hja --rank auto"
"$BR" report mtbench-judges --models judge-aware btl judge-aware:position_bias=true --method nuts \
  --draws 1500 --tune 1000 --chains 4 --seed 1 --no-progress --force --out "$OUTJ/report.html" \
  --title "MT-Bench judges: judge-aware, pooled and position-aware models"
echo "wrote $OUTJ/report.html"
