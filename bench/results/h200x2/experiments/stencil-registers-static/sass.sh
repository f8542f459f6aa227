#!/usr/bin/env bash
# sass.sh FILE.cu NAME [nvcc flags]: compiles a variant of apps/stencil/stencil_dcuda.cu as the
# build does (sm_90), prints the kernel's spill line (ptxas -v), dumps the SASS to $WORK/NAME.sass
# and lists the point loops (loops.py). Needs the repository built in build/ and cuobjdump
# (docs/performance.md, "Reading the SASS": CUOBJDUMP=/work/tools/usr/local/cuda/bin/cuobjdump).
# Example: sass.sh apps/stencil/stencil_dcuda.cu head2 -DSTENCIL_RANKS_PER_SM=2
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../../.." && pwd)
file=$(realpath "$1"); name=$2; shift 2
WORK=${WORK:-/tmp/stencil-registers}; mkdir -p "$WORK"
CUOBJDUMP=${CUOBJDUMP:-/work/tools/usr/local/cuda/bin/cuobjdump}
nvcc -I"$(dirname "$file")" -I"$repo/apps/common" -I"$repo/include" -I"$repo/src" \
  $(mpicxx --showme:incdirs | tr ' ' '\n' | sed 's/^/-isystem=/') -O3 -DNDEBUG \
  --generate-code=arch=compute_90,code=[sm_90] -std=c++17 -x cu -c "$file" -o "$WORK/$name.o" \
  -Xptxas -v "$@" 2>&1 | grep -A1 "properties for.*stencil_kernel" | tail -1
"$CUOBJDUMP" -sass "$WORK/$name.o" > "$WORK/$name.sass"
python3 "$here/loops.py" "$WORK/$name.sass" stencil_kernel
