#!/usr/bin/env bash
# Report and gate one scored run against its baselines, as the GitHub Actions recipe does; runs locally too.
#
#   gate.sh RESULTS BASELINE_DIR OUT_DIR [tracescore gate options...]
#
# RESULTS is the result file of `tracescore score --out`; every *.jsonl under BASELINE_DIR (one per baseline run,
# e.g. downloaded artifacts of the last runs on main) becomes a --baseline. Writes OUT_DIR/report.md, report.html,
# gate.md, gate.xml (JUnit) and summary.md (gate + report, for a PR comment), appends summary.md to
# $GITHUB_STEP_SUMMARY when that is set, and exits with tracescore's status: 0 the gate passed, 1 a rule failed,
# 2 a bad option, config value, score name or field, or a missing file, 6 could not run (a file with no scored trace:
# empty, unreadable, or a traces file instead of results). A usage error of this script exits 2.
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 RESULTS BASELINE_DIR OUT_DIR [gate options...]" >&2
  exit 2
fi
results=$1 baselines=$2 out=$3
shift 3
group_by=${TRACESCORE_GROUP_BY:-metadata.provider}
mkdir -p "$out"
rm -f "$out/gate.md" "$out/gate.xml"

args=()
if [ -d "$baselines" ]; then
  while IFS= read -r -d '' file; do
    args+=(--baseline "$file")
  done < <(find "$baselines" -name '*.jsonl' -type f -print0 | sort -z)
fi

tracescore report "$results" --group-by "$group_by" --format markdown --out "$out/report.md" || exit $?
tracescore report "$results" --group-by "$group_by" --format html --out "$out/report.html" || exit $?
tracescore gate "$results" ${args[@]+"${args[@]}"} --markdown "$out/gate.md" --junit "$out/gate.xml" "$@" >/dev/null
status=$?
if [ ! -f "$out/gate.md" ]; then
  echo "tracescore gate could not run (exit $status); see the error above" >&2
  exit $status
fi

{
  cat "$out/gate.md"
  echo
  echo "<details><summary>Stage report: cells, trace ids, work queue</summary>"
  echo
  cat "$out/report.md"
  echo
  echo "</details>"
} >"$out/summary.md"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi
cat "$out/gate.md"
exit $status
