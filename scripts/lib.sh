# Shell functions the scripts share; source it after `cd` to the repository root.

# Sets BRANDUBH to a release build of this checkout, built now, unless the caller set it.
brandubh_binary() {
  if [ -z "${BRANDUBH:-}" ]; then
    cargo build --release --quiet --workspace
    BRANDUBH=./target/release/brandubh
  fi
}

# Prints the CPU's model name (empty where /proc/cpuinfo has none).
cpu_name() {
  sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1
}
