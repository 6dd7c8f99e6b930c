package sema

import (
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"gtrace/lang/ast"
	"gtrace/probe"
	"gtrace/symbol"
)

// call checks a function call used as an expression or statement.
func (c *checker) call(call *ast.Call) *Type {
	if isConfig(call.Name) && len(call.Args) == 0 {
		return c.configRecord(call)
	}
	if call.Name == "getopt" {
		return c.getopt(call)
	}
	f := lookupFunc(call.Name)
	if f == NoFunc {
		if t, ok := c.stdlibCall(call); ok {
			return t
		}
		c.errorf(call, "Unknown function: %s", call.Name)
		return nil
	}
	if f.Unsafe() && !c.opts.Config.Unsafe {
		c.errorf(call, "%s() is an unsafe function being used in safe mode", call.Name)
		return nil
	}
	if f.Agg() != NoAgg {
		c.errorf(call, "%s() should be directly assigned to a map", call.Name)
		return nil
	}
	if !c.arity(call, f) {
		return nil
	}
	c.prog.Funcs[call] = f
	args := call.Args
	switch f {
	case FPrintf, FSystem, FCat:
		if _, ok := args[0].(*ast.StrLit); !ok {
			c.errorf(args[0], "%s() expects a string literal as its first argument", call.Name)
			return VoidT
		}
		c.expr(args[0])
		types := make([]*Type, 0, len(args)-1)
		for _, a := range args[1:] {
			t := c.expr(a)
			if t.Kind == Void || t.Kind == Agg {
				c.errorf(a, "%s() can not print a value of type '%s'", call.Name, t)
			}
			types = append(types, t)
		}
		c.checkFormat(call, args[0].(*ast.StrLit), types)
		return VoidT
	case FPrint:
		if m, ok := args[0].(*ast.Map); ok && len(m.Keys) == 0 {
			c.wholeMap(m)
			c.prog.Types[m] = VoidT
		} else {
			if len(args) > 1 {
				c.errorf(call, "print() takes top and div only when printing a whole map")
			}
			if t := c.expr(args[0]); t.Kind == Void || t.Kind == Agg {
				c.errorf(args[0], "print() can not print a value of type '%s'", t)
			}
		}
		for _, a := range args[1:] {
			_, isConst := c.constInt(a)
			if _, isOption := c.optionInt(a); !isConst && !isOption {
				c.errorf(a, "print(): top and div must be constant integers")
			}
		}
		return VoidT
	case FTime:
		if len(args) == 1 {
			if _, ok := args[0].(*ast.StrLit); !ok {
				c.errorf(args[0], "time() expects a string literal")
			}
			c.expr(args[0])
		}
		return VoidT
	case FExit:
		if len(args) == 1 {
			c.wantInt(args[0], c.expr(args[0]))
		}
		return VoidT
	case FStr:
		if t, ok := c.strParam(call); ok {
			return t
		}
		t := c.expr(args[0])
		size := c.opts.Config.MaxStrlen
		if len(args) == 2 {
			c.wantInt(args[1], c.expr(args[1]))
			// The length counts the NUL, as in bpftrace: str(p, 5)
			// copies at most 4 bytes.
			if n, ok := c.constInt(args[1]); ok && n > 0 && int(n) < size {
				size = int(n)
			}
		}
		if t.Kind == String {
			return t
		}
		c.wantInt(args[0], t)
		return StringType(size)
	case FKsym:
		c.wantInt(args[0], c.expr(args[0]))
		return KsymT
	case FKaddr:
		c.expr(args[0])
		name, ok := c.stringLiteral(args[0])
		if !ok {
			c.errorf(args[0], "kaddr() expects a string literal")
			return nil
		}
		addr, ok := c.opts.Kaddr(name.Value)
		if !ok {
			c.errorf(call, "Failed to resolve kernel symbol: %s", name.Value)
			return nil
		}
		c.prog.Consts[call] = int64(addr)
		return Uint64
	case FBswap:
		t := c.expr(args[0])
		c.wantInt(args[0], t)
		if t.Kind != Int {
			return Uint64
		}
		return t
	case FSignal:
		t := c.expr(args[0])
		if t.Kind != String {
			c.wantInt(args[0], t)
		}
		if s, ok := args[0].(*ast.StrLit); ok && SignalNumber(s.Value) == 0 {
			c.errorf(s, "signal(): unknown signal %s", s.Value)
		}
		return VoidT
	case FStrncmp:
		a, b := c.expr(args[0]), c.expr(args[1])
		if a.Kind != String || b.Kind != String {
			c.errorf(call, "strncmp() expects two strings")
		}
		if _, ok := c.constInt(args[2]); !ok {
			c.errorf(args[2], "strncmp(): the length must be a constant integer")
		}
		c.expr(args[2])
		return Int64
	case FKstack, FUstack:
		return c.stackCall(call, f)
	case FDwUstack:
		return c.dwUstack(call, c.stackCall(call, f))
	case FUsym:
		c.wantInt(args[0], c.expr(args[0]))
		return UsymT
	case FUaddr:
		name, ok := args[0].(*ast.StrLit)
		if !ok {
			c.errorf(args[0], "uaddr() expects a string literal")
			return nil
		}
		c.expr(args[0])
		// uaddr needs a binary, and registers to read an address with.
		if p := &c.prog.Probe; !p.UserSpace() || p.Context() != probe.Registers {
			c.errorf(call, "uaddr() can only be used in uprobe and uretprobe probes")
			return nil
		}
		addr, size, err := symbol.Symbol(c.prog.Probe.Target, name.Value)
		if err != nil {
			c.errorf(args[0], "uaddr(): %v", err)
			return nil
		}
		c.prog.Consts[call] = int64(addr)
		c.uaddrBias(call)
		return &Type{Kind: Pointer, Size: 8, BTF: symbolPointee(size)}
	case FStrcontains:
		a, b := c.expr(args[0]), c.expr(args[1])
		if a.Kind != String || b.Kind != String {
			c.errorf(call, "strcontains() expects two strings")
		}
		return BoolT
	case FDelete, FHasKey:
		m, ok := args[0].(*ast.Map)
		if !ok {
			c.errorf(args[0], "%s() expects a map as its first argument", call.Name)
			return nil
		}
		if len(args) == 2 {
			if len(m.Keys) > 0 {
				c.errorf(args[1], "%s() takes either @m[key] or @m, key", call.Name)
				return nil
			}
			if mi := c.info.Maps[m.Name]; f == FHasKey && mi != nil && mi.Key == nil && !mi.keyUnknown && mi.Value != nil {
				c.errorf(call, "call to has_key() expects a map with explicit keys (non-scalar map)")
				return nil
			}
			// delete(@m, k) is delete(@m[k]).
			t := c.expr(args[1])
			c.useMap(m, c.keyType(t, args[1]), t, args[1])
		} else {
			c.mapKey(m)
		}
		c.prog.Types[args[0]] = VoidT
		// delete() says whether the key was there, as in bpftrace HEAD.
		return BoolT
	case FClear, FZero, FLen:
		if t := c.stackLen(f, args[0]); t != nil {
			return t
		}
		m, ok := args[0].(*ast.Map)
		if !ok || len(m.Keys) > 0 {
			c.errorf(args[0], "%s() expects a map with no key", call.Name)
			return nil
		}
		c.wholeMap(m)
		c.prog.Types[m] = VoidT
		if f == FLen {
			mi := c.info.Maps[m.Name]
			// A histogram keeps an entry per bucket, a tseries per
			// interval: no count of keys.
			if v := mi.Value; v != nil && (v.Agg == AggHist || v.Agg == AggLHist || v.Agg == AggTSeries) {
				c.errorf(args[0], "len() can not count the keys of %s, a %s() map", m.Name, v.Agg)
			} else if !c.quiet && mi.Key == nil && !mi.keyUnknown && mi.Value != nil {
				c.errorf(call, "call to len() expects a map with explicit keys (non-scalar map)")
			}
			return Int64
		}
		return VoidT
	case FStrftime:
		f, ok := args[0].(*ast.StrLit)
		if !ok {
			c.errorf(args[0], "strftime() expects a string literal as its format")
			return nil
		}
		c.expr(args[0])
		c.wantInt(args[1], c.expr(args[1]))
		return &Type{Kind: Timestamp, Size: 8, Format: f.Value}
	case FNsecs:
		if len(args) == 0 {
			return Uint64
		}
		id, ok := args[0].(*ast.Ident)
		if !ok || !slices.Contains(Clocks, id.Name) {
			c.errorf(args[0], "nsecs() takes a clock: %s", strings.Join(Clocks, ", "))
			return nil
		}
		c.prog.Types[id] = VoidT
		return Uint64
	case FPton, FMacaddr, FCgroupPath, FPercpuKaddr, FSocketCookie, FSkboutput, FWriteUser, FReg, FErrorf, FWarnf, FDebugf:
		return c.netCall(call, f)
	case FBuf:
		return c.buf(call)
	case FPid, FTid, FComm, FStrlen, FStrerror, FSignalName, FSyscallName, FStrstr, FStrConcat, FMemcmp, FAssert:
		return c.stdlibFunc(call, f)
	case FFind, FOverride, FPath, FSignalThread, FUnwatch:
		return c.stdlib2Func(call, f)
	case FNtop:
		return c.ntop(call)
	case FJoin:
		if t := c.expr(args[0]); t.Kind != Int && t.Kind != Pointer && t.Kind != Invalid {
			c.errorf(args[0], "join() expects a pointer to an array of strings, got '%s'", t)
		}
		if len(args) == 2 {
			if _, ok := args[1].(*ast.StrLit); !ok {
				c.errorf(args[1], "join() expects a string literal as its separator")
			}
			c.expr(args[1])
		}
		return VoidT
	}
	return VoidT
}

// buf checks buf(data[, length]): data is a pointer, with a length of at
// most max_strlen, or an array whose size is the length.
func (c *checker) buf(call *ast.Call) *Type {
	args := call.Args
	t := c.expr(args[0])
	limit := c.opts.Config.MaxStrlen
	if t.Kind == Array || t.Kind == String {
		n := min(t.Size, limit)
		if len(args) == 2 {
			c.expr(args[1])
			k, ok := c.constInt(args[1])
			if !ok || k < 0 {
				c.errorf(args[1], "buf(): the length of an array must be a constant integer")
				return nil
			}
			n = min(n, int(k))
		}
		return BufferType(n)
	}
	c.wantInt(args[0], t)
	if len(args) == 1 {
		c.errorf(call, "buf() needs a length when reading through a pointer")
		return nil
	}
	c.wantInt(args[1], c.expr(args[1]))
	if n, ok := c.constInt(args[1]); ok {
		if n < 0 {
			c.errorf(args[1], "buf(): the length must not be negative")
			return nil
		}
		return BufferType(min(int(n), limit))
	}
	return BufferType(limit)
}

// ntop checks ntop([af, ]addr): an integer is an IPv4 address, a 4-byte
// array too, and a 16-byte array an IPv6 address.
func (c *checker) ntop(call *ast.Call) *Type {
	args := call.Args
	addr := args[len(args)-1]
	if len(args) == 2 {
		c.wantInt(args[0], c.expr(args[0]))
	}
	t := c.expr(addr)
	switch {
	case t.Kind == Int, t.Kind == Invalid:
	case t.Kind == Array && t.Elems[0].Size == 1 && (t.Len == 4 || t.Len == 16):
	default:
		c.errorf(addr, "ntop() expects an integer or an array of 4 or 16 bytes, got '%s'", t)
		return nil
	}
	return InetT
}

// SignalNumber maps a signal name such as "SIGKILL" or "KILL" to its
// number, or 0.
func SignalNumber(name string) int {
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	return int(unix.SignalNum(name))
}
