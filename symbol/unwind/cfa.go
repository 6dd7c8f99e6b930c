package unwind

import "fmt"

// rule is how a register of the caller is recovered.
type rule struct {
	kind   ruleKind
	offset int64 // for ruleOffset: saved at CFA + offset
}

type ruleKind uint8

const (
	ruleSame      ruleKind = iota // unchanged, the initial rule
	ruleUndefined                 // unrecoverable
	ruleOffset                    // saved at CFA + offset
	ruleOther                     // any other rule, which gtrace does not follow
)

// state is the part of a row's register rules that the unwinder uses.
type state struct {
	cfaReg    uint64
	cfaOffset int64
	cfaExpr   []byte // set when an expression computes the CFA
	rbp, ra   rule
}

// row turns the state in effect at addr into a Row.
func (s state) row(addr uint64) Row {
	r := Row{Addr: addr}
	if s.ra.kind != ruleOffset || s.ra.offset != -8 {
		return r
	}
	switch s.rbp.kind {
	case ruleOffset:
		r.RBPOffset = int32(s.rbp.offset)
	case ruleOther:
		return r
	}
	switch {
	case s.cfaExpr != nil:
		off, ok := derefRBP(s.cfaExpr)
		if !ok {
			return r
		}
		r.Kind, r.CFAOffset = DerefRBP, int32(off)
	case s.cfaReg == regRSP:
		r.Kind, r.CFAOffset = RSP, int32(s.cfaOffset)
	case s.cfaReg == regRBP:
		r.Kind, r.CFAOffset = RBP, int32(s.cfaOffset)
	}
	return r
}

// derefRBP recognizes the CFA expression gcc writes for a function that
// realigns its stack, DW_OP_breg6 (rbp) N; DW_OP_deref, and returns N.
func derefRBP(expr []byte) (int64, bool) {
	const opBreg6, opDeref = 0x76, 0x06
	if len(expr) < 3 || expr[0] != opBreg6 || expr[len(expr)-1] != opDeref {
		return 0, false
	}
	r := &reader{b: expr[:len(expr)-1], pos: 1}
	n := r.sleb()
	return n, r.err == nil && r.pos == len(r.b)
}

// setRule sets the rule of register reg, where it is one tracked.
func (s *state) setRule(reg uint64, r rule) {
	switch reg {
	case regRBP:
		s.rbp = r
	case regRA:
		s.ra = r
	}
}

// run executes the CIE's initial instructions, then an FDE's, from
// address pc, and returns a row for each address where the rules change.
func run(c *cie, instrs []byte, pc, base uint64) ([]Row, error) {
	if c.raReg != regRA {
		return nil, fmt.Errorf("return address in register %d, not %d", c.raReg, regRA)
	}
	var init state
	if _, err := execute(c, c.initial, &init, nil, 0, base, nil); err != nil {
		return nil, fmt.Errorf("CIE instructions: %w", err)
	}
	s := init
	var rows []Row
	// Each row starts where the rules in effect up to then apply; a row
	// at an address already given replaces it.
	emit := func(addr uint64) {
		r := s.row(addr)
		if n := len(rows); n > 0 && rows[n-1].Addr == addr {
			rows[n-1] = r
			return
		}
		rows = append(rows, r)
	}
	end, err := execute(c, instrs, &s, &init, pc, base, emit)
	if err != nil {
		return nil, err
	}
	emit(end)
	return rows, nil
}

// Call frame instructions (DW_CFA_*).
const (
	cfaAdvanceLoc        = 0x40 // high two bits
	cfaOffset            = 0x80
	cfaRestore           = 0xc0
	cfaNop               = 0x00
	cfaSetLoc            = 0x01
	cfaAdvanceLoc1       = 0x02
	cfaAdvanceLoc2       = 0x03
	cfaAdvanceLoc4       = 0x04
	cfaOffsetExtended    = 0x05
	cfaRestoreExtended   = 0x06
	cfaUndefined         = 0x07
	cfaSameValue         = 0x08
	cfaRegister          = 0x09
	cfaRememberState     = 0x0a
	cfaRestoreState      = 0x0b
	cfaDefCFA            = 0x0c
	cfaDefCFARegister    = 0x0d
	cfaDefCFAOffset      = 0x0e
	cfaDefCFAExpression  = 0x0f
	cfaExpression        = 0x10
	cfaOffsetExtendedSF  = 0x11
	cfaDefCFASF          = 0x12
	cfaDefCFAOffsetSF    = 0x13
	cfaValOffset         = 0x14
	cfaValOffsetSF       = 0x15
	cfaValExpression     = 0x16
	cfaGNUArgsSize       = 0x2e
	cfaGNUNegOffsetExtSF = 0x2f
)

// execute runs call frame instructions over s from address pc and returns
// the address reached. emit is called with the address before each
// advance; init is the CIE's state, for restores (nil while running the
// CIE's own instructions).
func execute(c *cie, instrs []byte, s *state, init *state, pc, base uint64, emit func(uint64)) (uint64, error) {
	r := &reader{b: instrs, base: base}
	var stack []state
	advance := func(delta uint64) {
		if emit != nil {
			emit(pc)
		}
		pc += delta * c.codeAlign
	}
	restore := func(reg uint64) {
		var ru rule
		if init != nil {
			switch reg {
			case regRBP:
				ru = init.rbp
			case regRA:
				ru = init.ra
			}
		}
		s.setRule(reg, ru)
	}
	for r.pos < len(r.b) && r.err == nil {
		op := r.u8()
		switch op & 0xc0 {
		case cfaAdvanceLoc:
			advance(uint64(op & 0x3f))
			continue
		case cfaOffset:
			s.setRule(uint64(op&0x3f), rule{ruleOffset, int64(r.uleb()) * c.dataAlign})
			continue
		case cfaRestore:
			restore(uint64(op & 0x3f))
			continue
		}
		switch op {
		case cfaNop:
		case cfaSetLoc:
			to := r.pointer(c.ptrEnc)
			if emit != nil {
				emit(pc)
			}
			pc = to
		case cfaAdvanceLoc1:
			advance(uint64(r.u8()))
		case cfaAdvanceLoc2:
			advance(uint64(r.u16()))
		case cfaAdvanceLoc4:
			advance(uint64(r.u32()))
		case cfaOffsetExtended:
			reg := r.uleb()
			s.setRule(reg, rule{ruleOffset, int64(r.uleb()) * c.dataAlign})
		case cfaOffsetExtendedSF:
			reg := r.uleb()
			s.setRule(reg, rule{ruleOffset, r.sleb() * c.dataAlign})
		case cfaGNUNegOffsetExtSF:
			reg := r.uleb()
			s.setRule(reg, rule{ruleOffset, -int64(r.uleb()) * c.dataAlign})
		case cfaRestoreExtended:
			restore(r.uleb())
		case cfaUndefined:
			s.setRule(r.uleb(), rule{kind: ruleUndefined})
		case cfaSameValue:
			s.setRule(r.uleb(), rule{kind: ruleSame})
		case cfaRegister:
			reg := r.uleb()
			r.uleb()
			s.setRule(reg, rule{kind: ruleOther})
		case cfaValOffset, cfaValOffsetSF:
			s.setRule(r.uleb(), rule{kind: ruleOther})
			r.uleb() // an sleb reads the same bytes
		case cfaExpression, cfaValExpression:
			s.setRule(r.uleb(), rule{kind: ruleOther})
			r.block()
		case cfaRememberState:
			stack = append(stack, *s)
		case cfaRestoreState:
			if len(stack) == 0 {
				return 0, fmt.Errorf("DW_CFA_restore_state with no state remembered")
			}
			*s, stack = stack[len(stack)-1], stack[:len(stack)-1]
		case cfaDefCFA:
			s.cfaReg, s.cfaOffset, s.cfaExpr = r.uleb(), int64(r.uleb()), nil
		case cfaDefCFASF:
			s.cfaReg, s.cfaExpr = r.uleb(), nil
			s.cfaOffset = r.sleb() * c.dataAlign
		case cfaDefCFARegister:
			s.cfaReg, s.cfaExpr = r.uleb(), nil
		case cfaDefCFAOffset:
			s.cfaOffset, s.cfaExpr = int64(r.uleb()), nil
		case cfaDefCFAOffsetSF:
			s.cfaOffset, s.cfaExpr = r.sleb()*c.dataAlign, nil
		case cfaDefCFAExpression:
			s.cfaExpr = r.block()
		case cfaGNUArgsSize:
			r.uleb()
		default:
			return 0, fmt.Errorf("call frame instruction %#x not supported", op)
		}
	}
	return pc, r.err
}
