#!/usr/bin/env bash
# The part of package_test.sh that runs the unpacked package (ROOT: what dpkg-deb -x wrote), from a
# copy outside the source tree: package_test.sh may run it with the source and build trees hidden.
#   installed_test.sh ROOT VERSION COMMIT WORK
set -euo pipefail
root=$1 version=$2 commit=$3 work=$4
cli=$root/usr/bin/ropecheck
fail() { echo "package_test: $*" >&2; exit 1; }
mkdir -p "$work"
find "$root" | sort >"$work/root-before"

line=$("$cli" --version)
echo "package_test: --version: $line"
[[ "$line" == "ropecheck $version (git $commit,"* ]] || fail "--version should name $version and git $commit"
"$cli" list >"$work/list.txt" || fail "list failed"
grep -q 'rotation_matrix/scalar' "$work/list.txt" || fail "list names no rotation_matrix/scalar"

# Data goes to the current directory (reports/out/latest/) or where the user points, never under
# the install prefix: a verify and the report of it from a working directory of the user's.
mkdir -p "$work/cwd" && cd "$work/cwd"
"$cli" verify --impl rotation_matrix/scalar --cases 5 >"$work/verify.txt" 2>&1 || {
  cat "$work/verify.txt"; fail "verify failed"; }
"$cli" report >"$work/report.txt" 2>&1 || { cat "$work/report.txt"; fail "report failed"; }
for file in verify.json report.md report.html; do
  [ -f "reports/out/latest/$file" ] || fail "no reports/out/latest/$file under the working directory"
done
# The version and commit the result files and the report's header record: the same as --version's.
grep -q "\"version\": \"$version\"" reports/out/latest/verify.json || fail "verify.json does not record version $version"
grep -q "\"git_commit\": \"$commit\"" reports/out/latest/verify.json || fail "verify.json does not record commit $commit"
grep -q "^| ropecheck version | $version |" reports/out/latest/report.md || fail "the report's header lacks version $version"
grep -q "^| git commit | $commit |" reports/out/latest/report.md || fail "the report's header lacks commit $commit"
"$cli" verify --impl rotation_matrix/scalar --cases 5 --out "$work/pointed" >/dev/null 2>&1
[ -f "$work/pointed/verify.json" ] || fail "verify --out: no verify.json where it was pointed"

# The man page, generated from the CLI's help: every command has its section.
man=$root/usr/share/man/man1/ropecheck.1.gz
zcat "$man" >"$work/ropecheck.1"
grep -q '^\.TH ROPECHECK "1"' "$work/ropecheck.1" || fail "the man page has no .TH ROPECHECK 1"
grep -q "$version" "$work/ropecheck.1" || fail "the man page does not name version $version"
for command in list verify compare gate vectors check report "history add" "history report" bench; do
  grep -q "^\.SS \"ropecheck $command\"" "$work/ropecheck.1" || fail "the man page lacks ropecheck $command"
done

# An example plugin's source as packaged, compiled against the unpacked header as docs/packaging.md
# says, and verified by the unpacked CLI.
cc -shared -fPIC -O2 -std=c99 -I"$root/usr/include" "$root/usr/share/ropecheck/examples/good_rope.c" \
  -o "$work/good_rope.so" -lm || fail "good_rope.c from the package does not compile"
"$cli" verify --plugin "$work/good_rope.so" --cases 20 --out "$work/good_rope" >"$work/good_rope.txt" 2>&1 || {
  cat "$work/good_rope.txt"; fail "verify --plugin good_rope.so failed"; }

# The outside-project example as packaged, built against the unpacked CMake package.
cmake -S "$root/usr/share/ropecheck/examples/outside-project" -B "$work/outside" \
  -DCMAKE_PREFIX_PATH="$root/usr" >"$work/outside.log" 2>&1 || { cat "$work/outside.log"; fail "outside-project: configure failed"; }
found=$(sed -n 's/^ropecheck_DIR:PATH=//p' "$work/outside/CMakeCache.txt")
[ "$found" = "$root/usr/lib/cmake/ropecheck" ] || fail "find_package(ropecheck) found $found, not the package"
cmake --build "$work/outside" >>"$work/outside.log" 2>&1 || { cat "$work/outside.log"; fail "outside-project: build failed"; }
ctest --test-dir "$work/outside" --output-on-failure >"$work/outside-ctest.log" 2>&1 || {
  cat "$work/outside-ctest.log"; fail "outside-project: its ropecheck test failed"; }
grep -q "$root/usr/bin/ropecheck" "$work/outside/CTestTestfile.cmake" || fail "the outside test runs another ropecheck"

find "$root" | sort >"$work/root-after"
diff "$work/root-before" "$work/root-after" >&2 || fail "something was written under the install prefix (above)"
echo "package_test: the unpacked CLI runs (--version, list, verify, report into the working directory), the man page has every command, an example plugin from its source and the outside project pass against the package"
