#!/usr/bin/env bash
# Every C and C++ file of the tree is formatted as .clang-format says. The check
# uses clang-format 14, Debian 12's: other major versions format some
# constructs differently, so a newer one would report files that are fine.
#   clang_format.sh              check the tree; names each file that is not formatted
#   clang_format.sh --self-test  show that the check refuses a badly formatted file
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
fmt=${ACCEL_CLANG_FORMAT:-clang-format-14}

if ! command -v "$fmt" >/dev/null; then
  echo "clang_format: $fmt not found (scripts/bootstrap installs it)" >&2
  exit 1
fi

# check DIR FILE...: 0 when every file is formatted, else 1 with one line per file.
check() {
  local dir=$1 f bad=0
  shift
  for f in "$@"; do
    [[ -f $dir/$f ]] || continue # deleted in the work tree, not yet committed
    if ! (cd "$dir" && "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1); then
      echo "clang_format: $f is not formatted; run: $fmt -i $f"
      bad=1
    fi
  done
  return "$bad"
}

if [[ ${1:-} == --self-test ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cp "$repo/.clang-format" "$tmp/"
  printf 'int  main( ){return 0;}\n' >"$tmp/bad.cpp"
  printf 'int main() { return 0; }\n' >"$tmp/good.cpp"
  check "$tmp" good.cpp || { echo "clang_format: self-test: a formatted file was refused" >&2; exit 1; }
  if check "$tmp" bad.cpp >/dev/null; then
    echo "clang_format: self-test: a badly formatted file passed" >&2
    exit 1
  fi
  echo "clang_format: self-test ok"
  exit 0
fi

cd "$repo"
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.c' '*.cpp' '*.h' | grep -v '^build')
check "$repo" "${files[@]}"
echo "clang_format: ok: ${#files[@]} files"
