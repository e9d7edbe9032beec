#!/usr/bin/env bash
# Build, test and package the editor extension from a clean state.
# MEM_BIN must name the real `mem` executable (the unit tests run it on temporary databases).
set -euo pipefail
cd "$(dirname "$0")"

if [[ -z "${MEM_BIN:-}" || ! -x "${MEM_BIN}" ]]; then
  echo "ci.sh: set MEM_BIN to the mem executable (got '${MEM_BIN:-}')" >&2
  exit 2
fi

echo "== npm ci"
npm ci --no-audit --no-fund --loglevel=error
echo "== tsc --noEmit (strict)"
npx --no-install tsc -p . --noEmit
echo "== build"
rm -rf out
npx --no-install tsc -p .
echo "== manifest check"
node scripts/check-manifest.js
echo "== node --test (mem: ${MEM_BIN})"
MEM_BIN="${MEM_BIN}" node --test out/test/
echo "== vsce package"
rm -f memory-ext.vsix
npx --no-install vsce package --no-dependencies --skip-license --allow-missing-repository -o memory-ext.vsix
node scripts/check-manifest.js memory-ext.vsix
