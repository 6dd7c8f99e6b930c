#!/bin/sh
# Regenerates output/testdata/*.golden by running the installed bpftrace on
# BEGIN-only programs with known values. output/golden_test.go builds the
# same values in gtrace's model and compares the printers' output byte for
# byte, after applying the documented differences between the bpftrace
# version recorded here and v0.26, the version gtrace follows.
#
# Needs root. Each file starts with "# " header lines (bpftrace version,
# format, program) ended by "# --"; the rest is bpftrace's stdout, as is.
set -eu

cd "$(dirname "$0")/.."
dir=output/testdata
mkdir -p "$dir"
version=$(bpftrace --version)

# gen NAME FORMAT PROGRAM
gen() {
	file="$dir/$1.$2.golden"
	tmp="$file.tmp"
	{
		printf '# %s\n' "$version"
		printf '# format: %s\n' "$2"
		printf '# program: %s\n' "$3"
		printf '# --\n'
	} >"$tmp"
	# stderr carries only warnings (e.g. about RLIMIT_MEMLOCK) here.
	if ! bpftrace -f "$2" -e "$3" >>"$tmp" 2>"$tmp.err"; then
		cat "$tmp.err" >&2
		rm -f "$tmp" "$tmp.err"
		echo "bpftrace failed for $1 ($2)" >&2
		exit 1
	fi
	rm -f "$tmp.err"
	mv "$tmp" "$file"
}

# both NAME PROGRAM
both() {
	gen "$1" text "$2"
	gen "$1" json "$2"
}

both counts 'BEGIN { @c[1] = count(); @c[2] = count(); @c[2] = count(); @c[3] = count(); @c[3] = count(); @c[3] = count(); @c[-7] = count(); @c[-7] = count(); @c[-7] = count(); @c[-7] = count(); @one = count(); exit(); }'

both sums 'BEGIN { @s["a"] = sum(10); @s["b"] = sum(-20); @s["c"] = sum(5); @t = sum(-3); @t = sum(-4); @u = sum(7); exit(); }'

both minmax 'BEGIN { @mn["a"] = min(5); @mn["b"] = min(-3); @mn["c"] = min(1); @mn["c"] = min(2); @mx["x"] = max(15); @mx["y"] = max(3); @mx["y"] = max(2); exit(); }'

both avg 'BEGIN { @a["x"] = avg(10); @a["x"] = avg(-5); @a["y"] = avg(-10); @a["y"] = avg(-5); @a["y"] = avg(5); @a["z"] = avg(100); @b = avg(7); @b = avg(8); exit(); }'

both stats 'BEGIN { @st["k1"] = stats(1); @st["k1"] = stats(2); @st["k2"] = stats(100); @z = stats(-10); @z = stats(-5); @z = stats(5); exit(); }'

both strings 'BEGIN { @v["b"] = "x"; @v["a"] = "y y"; @v["c"] = "z"; @w = "hello world"; @k["foo"] = 1; @k["bar"] = 2; @sp["a b"] = 3; @q = "say \"hi\"\tnow\\"; exit(); }'

both multikey 'BEGIN { @m[1, "a"] = count(); @m[2, "b"] = count(); @m[2, "b"] = count(); @n[3, "z"] = "p"; @n[1, "y"] = "q"; @n[1, "b"] = "r"; @n[-2, "y"] = "s"; exit(); }'

both tuples 'BEGIN { @t[1] = (1, "a", -3); @t[2] = (2, "bb", 4); @u = (5, "x"); exit(); }'

both ints 'BEGIN { @x = 5; @y = -3; @big = 9007199254740993; @neg[1] = -5; @neg[2] = 10; @neg[3] = -20; exit(); }'

both hist 'BEGIN { @h = hist(-1); @h = hist(0); @h = hist(0); @h = hist(1); @h = hist(2); @h = hist(3); @h = hist(100); @h = hist(1000); @h = hist(1024); @h = hist(1500000); @big = hist(1073741824); @big = hist(2147483647); @big = hist(2147483647); @neg = hist(-5); @neg = hist(-100); @kh["a"] = hist(5); @kh["b"] = hist(5); @kh["b"] = hist(500); exit(); }'

both lhist 'BEGIN { @l = lhist(-3, 0, 100, 10); @l = lhist(250, 0, 100, 10); @l = lhist(55, 0, 100, 10); @l = lhist(100, 0, 100, 10); @l = lhist(0, 0, 100, 10); @k = lhist(3000, 0, 10240, 1024); @k = lhist(5000, 0, 10240, 1024); @k = lhist(20000, 0, 10240, 1024); @mb = lhist(3145728, 0, 4194304, 1048576); @off = lhist(17, 5, 45, 5); @off = lhist(2, 5, 45, 5); @over = lhist(500, 0, 100, 10); @under[1] = lhist(-1, 10, 110, 10); @odd = lhist(10, 0, 10, 3); @odd = lhist(4, 0, 10, 3); exit(); }'

gen print_top_div text 'BEGIN { @c["a"] = count(); @c["b"] = count(); @c["b"] = count(); @c["c"] = count(); @c["c"] = count(); @c["c"] = count(); print(@c, 2); print(@c, 0, 2); @s["x"] = sum(100); @s["y"] = sum(250); @s["z"] = sum(-35); print(@s, 1, 10); print(@s, 0, 7); @a["p"] = avg(50); @a["q"] = avg(75); print(@a, 1, 10); @h["k"] = hist(8); @h["k"] = hist(8); @h["k"] = hist(8); @h["k"] = hist(20); @h["j"] = hist(1); print(@h, 1, 2); clear(@c); clear(@s); clear(@a); clear(@h); exit(); }'

gen print_values text 'BEGIN { $x = 5; print($x); print(-3); print("str"); print((1, "a", -2)); exit(); }'

both printf 'BEGIN { printf("[%d] [%d]\n", 42, -42); printf("[%x] [%X] [%o] [%u]\n", 255, 255, 8, 7); printf("[%x] [%d] [%u]\n", -1, 5000000000, -1); printf("[%lx] [%lu] [%ld] [%llx] [%lld]\n", -1, -1, -1, -2, 5000000000); printf("[%hx] [%hhx] [%jx] [%zu]\n", 0x12345678abcdef, 0x12345678abcdef, 0x12345678abcdef, 7); printf("[%hd] [%hhd] [%hhu] [%hu]\n", 40000, 200, 300, 70000); printf("[%5d] [%-5d] [%5s] [%-5s]\n", 42, 42, "ab", "ab"); printf("[%c%c%c] [%5c] [%-3c]\n", 65, 66, 67, 68, 69); printf("[%s] [%s] [%s]\n", "str", "", "with space"); printf("100%% [%08x] [%04d]\n", 255, 42); printf("no args\n"); printf("[%s]\n", "tab\there"); exit(); }'

echo "wrote $(ls "$dir"/*.golden | wc -l) files to $dir"
