package fakekernel

import "github.com/cilium/ebpf/btf"

// rawTracepointFunc is the function the kernel generates for the raw
// tracepoint sched_switch, which types its args: a context pointer, then
// the tracepoint's arguments, as the real kernel's.
func rawTracepointFunc(name string) (*btf.Func, bool) {
	if name != "__probestub_sched_switch" {
		return nil, false
	}
	task := &btf.Pointer{Target: kernelTypes()["struct task_struct"]}
	proto := &btf.FuncProto{Return: &btf.Void{}, Params: []btf.FuncParam{
		{Name: "__data", Type: &btf.Pointer{Target: &btf.Void{}}},
		{Name: "preempt", Type: &btf.Int{Name: "_Bool", Size: 1, Encoding: btf.Bool}},
		{Name: "prev", Type: task},
		{Name: "next", Type: task},
		{Name: "prev_state", Type: &btf.Int{Name: "unsigned int", Size: 4}},
	}}
	return &btf.Func{Name: name, Type: proto, Linkage: btf.GlobalFunc}, true
}
