# Shell functions the scripts share; source it after `cd` to the repository root.

# Sets BRANDUBH to a release build of this checkout, built now, unless the caller set it.
brandubh_binary() {
  if [ -z "${BRANDUBH:-}" ]; then
    cargo build --release --quiet --workspace
    BRANDUBH=./target/release/brandubh
  fi
}

# Prints the CPU's model name with its family and model numbers, as `brandubh bench` names it
# (a virtual machine often gives only "Intel(R) Xeon(R) Processor"); empty where
# /proc/cpuinfo has no model name.
cpu_name() {
  local name family model
  name=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
  family=$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
  model=$(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
  [ -n "$name" ] || return 0
  if [ -n "$family" ] && [ -n "$model" ]; then
    echo "$name (family $family, model $model)"
  else
    echo "$name"
  fi
}

# Sets `out` to the folder OUT names (created if missing), or to a temporary folder that is
# removed when the script exits.
out_dir() {
  if [ -n "${OUT:-}" ]; then
    out=$OUT
    mkdir -p "$out"
  else
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
  fi
}
