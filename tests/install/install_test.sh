#!/bin/sh
# Installs the built tree into a temporary prefix, builds tests/install's
# program against the installed grove twice (find_package(grove) with CMake;
# pkg-config's grove.pc with the compiler alone), and runs both under the
# installed `grove run -n 2`, checking their exact output. Reuses the build
# tree: nothing of grove is compiled again.
#
#   install_test.sh BUILD_DIR SOURCE_DIR CXX
set -u
build=$1
src=$2
cxx=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/grove-install-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
prefix=$dir/prefix

cmake --install "$build" --prefix "$prefix" >"$dir/install.log" 2>&1 ||
  { cat "$dir/install.log"; fail "cmake --install exited with $?"; }
for f in include/grove/grove.hpp include/grove/comm.hpp bin/grove lib/libgrove.so \
  lib/cmake/grove/groveConfig.cmake lib/cmake/grove/groveConfigVersion.cmake \
  lib/cmake/grove/groveTargets.cmake lib/pkgconfig/grove.pc; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
soname=$(readelf -d "$prefix/lib/libgrove.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libgrove.so.0 ] || fail "SONAME '$soname', expected libgrove.so.0"
[ -e "$prefix/lib/libgrove.so.0" ] || fail "no libgrove.so.0 link"

# find_package(grove) -> grove::grove.
cmake -S "$src/tests/install" -B "$dir/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release >"$dir/configure.log" 2>&1 ||
  { cat "$dir/configure.log"; fail "configuring the consumer with find_package(grove) failed"; }
cmake --build "$dir/cmake-build" >"$dir/build.log" 2>&1 ||
  { cat "$dir/build.log"; fail "building the consumer with find_package(grove) failed"; }

# pkg-config: grove.pc alone gives the flags (an rpath is the consumer's choice).
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[ "$(pkg-config --modversion grove)" = 0.1.0 ] || fail "pkg-config --modversion grove"
# shellcheck disable=SC2046
"$cxx" -std=c++20 -o "$dir/pc-consumer" "$src/tests/install/consumer.cpp" \
  $(pkg-config --cflags --libs grove) -Wl,-rpath,"$(pkg-config --variable=libdir grove)" \
  >"$dir/pc.log" 2>&1 || { cat "$dir/pc.log"; fail "building the consumer with pkg-config failed"; }

for prog in "$dir/cmake-build/grove_consumer" "$dir/pc-consumer"; do
  out=$(timeout 60 "$prefix/bin/grove" run -n 2 --param wait_policy=block "$prog" 2>&1) ||
    { echo "$out"; fail "$(basename "$prog") under grove run exited with $?"; }
  got=$(echo "$out" | grep '^consumer rank' | sort)
  want="consumer rank 0 of 2: sum 3, word grove
consumer rank 1 of 2: sum 3, word grove"
  [ "$got" = "$want" ] || { echo "$out"; fail "$(basename "$prog") printed '$got'"; }
  # The program links the installed libgrove, not the build tree's.
  ldd "$prog" | grep -q "libgrove.so.0 => $prefix/lib/" || fail "$(basename "$prog") does not load $prefix/lib/libgrove.so.0"
done
echo "install ok: find_package and pkg-config consumers ran under the installed grove run"
