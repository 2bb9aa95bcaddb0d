#!/usr/bin/env bash
# Builds the two lines of the Anvia runtime that docs/runtimes.md judges, from
# their public source, outside the kit, and prints the variables that name them.
#
#   bash node/frameworks/anvia-build.sh [--rerun] DIR [SOURCE]
#
# DIR receives Node.js 24 and pnpm 11 (from the npm registry), a checkout of
# each pinned commit and its built core; a second call reuses what is there.
# SOURCE is a git URL or a local clone (default https://github.com/anvia-hq/anvia).
# Nothing is written inside the kit's checkout. The script prints the
# variables that name the two cores; from the kit's checkout
#
#   eval "$(bash node/frameworks/anvia-build.sh /tmp/anvia)"
#   memconform compliance --runtimes --target anvia --target anvia-main
#
# reruns both targets and rewrites their kept results and docs/runtimes.md;
# `--rerun` does that second step too (run from the kit's checkout, with
# `memconform` on PATH).
set -euo pipefail
rerun=false
if [ "${1:-}" = "--rerun" ]; then rerun=true; shift; fi
dir=${1:?usage: anvia-build.sh [--rerun] DIR [SOURCE]}
source=${2:-https://github.com/anvia-hq/anvia}
staging=5a24bb23   # branch staging, tag v1.0.0-rc.9, @anvia/core 1.0.0-rc.9
main=ac59bee9      # branch main, @anvia/core 0.26.0 (the AgentBuilder API)
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
log() { printf '%s\n' "$*" >&2; }

[ -x "$dir/tools/node_modules/.bin/node" ] || {
    log "fetching Node.js 24 and pnpm 11 into $dir/tools"
    npm install --silent --prefix "$dir/tools" node@24 pnpm@11.0.4 >&2
}
export PATH="$dir/tools/node_modules/.bin:$PATH"

[ -d "$dir/source/.git" ] || [ -f "$dir/source/HEAD" ] || {
    log "cloning $source"
    git clone --quiet --no-checkout "$source" "$dir/source" >&2
}

build() {  # name commit
    local tree="$dir/$1"
    if [ ! -f "$tree/packages/core/dist/index.js" ]; then
        log "building @anvia/core at $2 in $tree"
        rm -rf "$tree"
        git -C "$dir/source" worktree prune
        git -C "$dir/source" worktree add --quiet --detach "$tree" "$2" >&2
        (cd "$tree" && pnpm install --frozen-lockfile --filter '@anvia/core...' >&2 \
            && pnpm --filter '@anvia/core' build >&2)
    fi
    printf '%s\n' "$tree/packages/core/dist/index.js"
}

core=$(build staging "$staging")
main_core=$(build main "$main")
printf 'export PATH=%q:"$PATH"\n' "$dir/tools/node_modules/.bin"
printf 'export MEMCONFORM_ANVIA_CORE=%q\n' "$core"
printf 'export MEMCONFORM_ANVIA_MAIN_CORE=%q\n' "$main_core"
if $rerun; then
    MEMCONFORM_ANVIA_CORE=$core MEMCONFORM_ANVIA_MAIN_CORE=$main_core \
        memconform compliance --runtimes --target anvia --target anvia-main >&2
fi
