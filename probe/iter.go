package probe

import "gtrace/kernel"

// listOnly are probe types that -l lists but gtrace cannot attach:
// iterators, which the kernel describes in BTF as struct bpf_iter__NAME.
var listOnly = []*provider{
	{names: []string{"iter", "it"}, list: &listing{probes: func(*lister) ([]string, error) { return kernel.Iterators() }}},
}
