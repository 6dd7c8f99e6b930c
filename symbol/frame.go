package symbol

// UserFrame is a user address symbolized: its function, its offset in
// it, and the file mapped there with the address as that file's
// symbols give it, for its line information.
type UserFrame struct {
	Name   string
	Offset uint64
	Path   string
	Vaddr  uint64
}

// Frame symbolizes addr in process pid as Resolve does, and also says
// which file it is in; ok is false when no symbol covers it.
func (u *User) Frame(pid uint32, addr uint64) (fr UserFrame, ok bool) {
	m, found := u.process(pid).find(u, addr)
	if !found || !m.exec || m.file == nil {
		return fr, false
	}
	f := m.file
	f.once.Do(func() { f.load(pid, m) })
	vaddr, ok := f.vaddr(m, addr)
	if !ok {
		return fr, false
	}
	i, ok := f.lookup(vaddr)
	if !ok {
		return fr, false
	}
	return UserFrame{Name: f.name(i), Offset: vaddr - f.syms[i].start, Path: m.path, Vaddr: vaddr}, true
}
