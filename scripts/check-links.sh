#!/usr/bin/env bash
# Checks the links of README.md and docs/*.md (or of the Markdown files given): every relative link names a file
# that exists, and every #anchor a heading of that file (GitHub's anchors: lower case, punctuation dropped, spaces
# as hyphens). Links to http(s) are not followed. Prints each broken link; exits 1 when there is one.
#   scripts/check-links.sh [FILE.md...]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
[ "$#" -gt 0 ] || set -- README.md docs/*.md

# GitHub's anchor of a heading's text.
anchor_of() {
  printf '%s' "$1" | LC_ALL=C tr 'A-Z' 'a-z' | LC_ALL=C sed -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g'
}

# The anchors of a Markdown file's headings, one a line (headings inside code fences left out).
anchors() {
  awk '/^```/ { fence = !fence; next } !fence && /^#+ / { sub(/^#+ +/, ""); print }' "$1" | while IFS= read -r h; do
    anchor_of "$h"; echo
  done
}

broken=0
checked=0
for file in "$@"; do
  dir=$(dirname "$file")
  # the targets of [text](target) and of <img src="target">, outside code fences
  targets=$(awk '/^```/ { fence = !fence; next } !fence' "$file" \
    | grep -oE '\]\([^) ]+\)|src="[^"]+"' | sed -E -e 's/^\]\(//' -e 's/\)$//' -e 's/^src="//' -e 's/"$//' || true)
  while IFS= read -r target; do
    [ -n "$target" ] || continue
    case "$target" in http://*|https://*|mailto:*) continue ;; esac
    checked=$((checked + 1))
    path="${target%%#*}"
    anchor=""
    [[ "$target" == *"#"* ]] && anchor="${target#*#}"
    if [ -z "$path" ]; then
      resolved="$file"
    else
      resolved="$dir/$path"
    fi
    if [ ! -e "$resolved" ]; then
      echo "$file: $target: no file $resolved"
      broken=1
      continue
    fi
    # the anchors read whole first: grep -q leaving a pipe early would fail it under pipefail
    if [ -n "$anchor" ] && ! grep -qxF -- "$anchor" <<< "$(anchors "$resolved")"; then
      echo "$file: $target: no heading with anchor #$anchor in $resolved"
      broken=1
    fi
  done <<< "$targets"
done
if [ "$broken" = 0 ]; then
  echo "links checked: $checked in $# files, none broken"
fi
exit "$broken"
