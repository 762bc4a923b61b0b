#!/usr/bin/env bash
# Runs shellcheck on every shell script of the repository: files ending in .sh and
# files whose first line names bash or sh, under scripts/, tests/, bench/, packaging/.
# A new script is checked without anyone having to list it.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(
  git ls-files -co --exclude-standard scripts tests bench packaging 2>/dev/null |
    while IFS= read -r f; do
      [[ -f $f ]] || continue
      case $f in
        *.sh) echo "$f" ;;
        *.*) ;;
        *) head -n1 "$f" | grep -Eq '^#!.*\b(ba)?sh\b' && echo "$f" ;;
      esac
    done)
if ((${#files[@]} < 10)); then
  echo "shellcheck.sh: found only ${#files[@]} scripts; is this a git checkout?" >&2
  exit 1
fi
echo "shellcheck: ${#files[@]} scripts"
exec shellcheck -x "${files[@]}"
