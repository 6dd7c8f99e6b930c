package codegen_test

import (
	"testing"

	"github.com/cilium/ebpf/asm"

	"gtrace/codegen"
)

// calls reports which helpers the programs of out call.
func calls(out *codegen.Output) map[asm.BuiltinFunc]bool {
	got := map[asm.BuiltinFunc]bool{}
	for _, p := range out.Spec.Programs {
		for _, ins := range p.Instructions {
			if ins.IsBuiltinCall() {
				got[asm.BuiltinFunc(ins.Constant)] = true
			}
		}
	}
	return got
}

// TestNetHelperCalls checks which kernel helper each helper function
// uses where.
func TestNetHelperCalls(t *testing.T) {
	tests := []struct {
		src       string
		want, not asm.BuiltinFunc
	}{
		// Only fentry's own arguments are pointers the helper takes.
		{`fentry:tcp_v4_connect { @x = socket_cookie(args.sk); }`, asm.FnGetSocketCookie, asm.FnProbeReadKernel},
		{`rawtracepoint:tcp_probe { @x = socket_cookie((struct sock *)arg0); }`, asm.FnProbeReadKernel, asm.FnGetSocketCookie},
		{`BEGIN { @x = *percpu_kaddr("process_counts"); }`, asm.FnThisCpuPtr, asm.FnPerCpuPtr},
		{`BEGIN { @x = *percpu_kaddr("process_counts", 1); }`, asm.FnPerCpuPtr, asm.FnThisCpuPtr},
		{`BEGIN { debugf("%d", 1); }`, asm.FnTracePrintk, asm.FnRingbufOutput},
		{`BEGIN { errorf("%d", 1); }`, asm.FnRingbufOutput, asm.FnTracePrintk},
		{`rawtracepoint:consume_skb { $r = skboutput("x", (struct sk_buff *)arg0, 10, 0); }`, asm.FnProbeReadKernel, asm.FnSkbOutput},
		{`kprobe:vfs_read { $ok = write_user(arg1, "x", 1); }`, asm.FnProbeWriteUser, asm.FnProbeRead},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got := calls(compile(t, tt.src, nil))
			if !got[tt.want] || got[tt.not] {
				t.Errorf("calls %v: want %v, not %v", got, tt.want, tt.not)
			}
		})
	}
}
