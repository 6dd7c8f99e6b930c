// Package unwind reads the call frame information of x86-64 ELF files,
// their .eh_frame sections, into the rows dw_ustack unwinds user stacks
// by without frame pointers.
//
// Each row says, from its address on, how to find the caller's frame:
// the canonical frame address (CFA) is rsp or rbp plus an offset, or the
// word at rbp plus an offset; the return address is the word at CFA-8;
// and rbp is either unchanged or saved at an offset from the CFA. Code
// whose rules say anything else (PLT stubs, signal trampolines) has a
// row of kind None, where unwinding stops, as it does where the return
// address is undefined, at the outermost frame.
package unwind
