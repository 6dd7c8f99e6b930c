package fakekernel

import (
	"fmt"

	"github.com/cilium/ebpf/btf"
)

// addNetTypes adds what socket_cookie() and skboutput() read: a socket
// with its cookie, a packet with its data.
func addNetTypes(m map[string]btf.Type) {
	u32 := &btf.Int{Name: "unsigned int", Size: 4}
	s64 := &btf.Int{Name: "long long", Size: 8, Encoding: btf.Signed}
	cookie := &btf.Typedef{Name: "atomic64_t", Type: &btf.Struct{Size: 8, Members: []btf.Member{{Name: "counter", Type: s64}}}}
	common := &btf.Struct{Name: "sock_common", Size: 16, Members: []btf.Member{
		{Name: "skc_hash", Type: u32}, {Name: "skc_cookie", Type: cookie, Offset: 64}}}
	m["struct sock_common"] = common
	m["struct sock"] = &btf.Struct{Name: "sock", Size: 24, Members: []btf.Member{
		{Name: "__sk_common", Type: common}, {Name: "sk_rcvbuf", Type: u32, Offset: 128}}}
	m["struct sk_buff"] = &btf.Struct{Name: "sk_buff", Size: 16, Members: []btf.Member{
		{Name: "len", Type: u32},
		{Name: "data", Type: &btf.Pointer{Target: &btf.Int{Name: "unsigned char", Size: 1}}, Offset: 64}}}
}

// tcpConnect is tcp_v4_connect, whose first argument is a socket.
func tcpConnect() *btf.Func {
	sock, _ := KernelType("struct sock")
	proto := &btf.FuncProto{
		Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed},
		Params: []btf.FuncParam{
			{Name: "sk", Type: &btf.Pointer{Target: sock}},
			{Name: "uaddr", Type: &btf.Pointer{Target: &btf.Void{}}},
			{Name: "addr_len", Type: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}},
		}}
	return &btf.Func{Name: "tcp_v4_connect", Type: proto, Linkage: btf.GlobalFunc}
}

// ProcessCountsID is the BTF id KernelVar gives process_counts, the fake
// kernel's one per-CPU variable.
const ProcessCountsID = 100

// KernelVar finds a variable of the fake kernel's BTF: process_counts.
func KernelVar(name string) (btf.TypeID, error) {
	if name != "process_counts" {
		return 0, fmt.Errorf("variable %s is not in the kernel's BTF", name)
	}
	return ProcessCountsID, nil
}
