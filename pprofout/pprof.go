package pprofout

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/google/pprof/profile"

	"gtrace/output"
)

// kernelFile names the kernel's mapping, as perf does.
const kernelFile = "[kernel.kallsyms]"

// unknownFile names the mapping of user frames no binary is known for.
const unknownFile = "[unknown]"

// Write writes maps to w as a gzipped pprof profile.
func Write(w io.Writer, maps []*output.StackMap, now time.Time) error {
	p, err := Profile(maps, now)
	if err != nil {
		return err
	}
	if err := p.Write(w); err != nil {
		return fmt.Errorf("write pprof profile: %w", err)
	}
	return nil
}

// Profile builds the profile of maps, taken at now.
func Profile(maps []*output.StackMap, now time.Time) (*profile.Profile, error) {
	b := &builder{
		p:           &profile.Profile{TimeNanos: now.UnixNano()},
		mappings:    map[mappingKey]*profile.Mapping{},
		mappingLocs: map[*profile.Mapping]int{},
		functions:   map[string]*profile.Function{},
		locations:   map[locationKey]*profile.Location{},
	}
	for i, sm := range maps {
		unit := "units"
		if sm.Kind == output.Count {
			unit = "count"
		}
		b.p.SampleType = append(b.p.SampleType, &profile.ValueType{Type: sm.Name, Unit: unit})
		for _, s := range sm.Samples {
			values := make([]int64, len(maps))
			values[i] = s.Value
			sample := &profile.Sample{Value: values, Location: b.stack(s.Frames)}
			addLabels(sample, s)
			b.p.Sample = append(b.p.Sample, sample)
		}
	}
	if len(maps) > 0 {
		b.p.DefaultSampleType = maps[0].Name
	}
	b.sortMappings()
	if err := b.p.CheckValid(); err != nil {
		return nil, fmt.Errorf("build pprof profile: %w", err)
	}
	return b.p, nil
}

// mappingKey is a binary: the kernel or a user file.
type mappingKey struct {
	kernel bool
	file   string
}

// locationKey is an address in a binary; frames of one address are its
// inlined calls and the function they are in.
type locationKey struct {
	mappingKey
	addr uint64
	// funcs are the names of the frames, which tell apart the frames
	// of a build-id stack: they have no address.
	funcs string
}

type builder struct {
	p        *profile.Profile
	mappings map[mappingKey]*profile.Mapping
	// mappingLocs counts each mapping's locations.
	mappingLocs map[*profile.Mapping]int
	functions   map[string]*profile.Function
	locations   map[locationKey]*profile.Location
}

// stack returns the locations of frames, which come root first,
// leaf first as pprof wants them.
func (b *builder) stack(frames []output.Frame) []*profile.Location {
	var locs []*profile.Location
	for end := len(frames); end > 0; {
		// Frames of one address, the inlined calls first, make one location.
		start := end - 1
		for start > 0 && sameAddress(frames[start-1], frames[end-1]) {
			start--
		}
		locs = append(locs, b.location(frames[start:end]))
		end = start
	}
	return locs
}

func sameAddress(a, b output.Frame) bool {
	return a.Addr == b.Addr && a.Kernel == b.Kernel && a.File == b.File
}

// location returns the location of frames of one address, which come
// root first: the function, then its inlined calls.
func (b *builder) location(frames []output.Frame) *profile.Location {
	f := frames[0]
	mk := mappingKey{kernel: f.Kernel, file: f.File}
	if !f.Kernel && f.File == "" {
		mk.file = unknownFile
	}
	key := locationKey{mappingKey: mk, addr: f.Addr}
	for _, fr := range frames {
		key.funcs += fr.Func + "\x00"
	}
	if loc := b.locations[key]; loc != nil {
		return loc
	}
	loc := &profile.Location{ID: uint64(len(b.p.Location) + 1), Address: f.Addr, Mapping: b.mapping(mk, f.Addr)}
	for i := len(frames) - 1; i >= 0; i-- {
		loc.Line = append(loc.Line, profile.Line{Function: b.function(frames[i].Func)})
	}
	b.locations[key] = loc
	b.mappingLocs[loc.Mapping]++
	b.p.Location = append(b.p.Location, loc)
	return loc
}

// mapping returns the mapping of mk, widened to cover addr.
func (b *builder) mapping(mk mappingKey, addr uint64) *profile.Mapping {
	m := b.mappings[mk]
	if m == nil {
		file := mk.file
		if mk.kernel {
			file = kernelFile
		}
		m = &profile.Mapping{ID: uint64(len(b.p.Mapping) + 1), Start: addr, Limit: addr + 1, File: file, HasFunctions: true}
		b.mappings[mk] = m
		b.p.Mapping = append(b.p.Mapping, m)
	}
	m.Start, m.Limit = min(m.Start, addr), max(m.Limit, addr+1)
	return m
}

// sortMappings puts first the mapping pprof takes for the program's
// binary, which it names in its reports: the user binary of the most
// locations, then the other user binaries, then the unknown and the
// kernel's.
func (b *builder) sortMappings() {
	rank := func(m *profile.Mapping) int {
		switch m.File {
		case unknownFile:
			return 1
		case kernelFile:
			return 2
		}
		return 0
	}
	slices.SortStableFunc(b.p.Mapping, func(x, y *profile.Mapping) int {
		return cmp.Or(cmp.Compare(rank(x), rank(y)), cmp.Compare(b.mappingLocs[y], b.mappingLocs[x]))
	})
	for i, m := range b.p.Mapping {
		m.ID = uint64(i + 1)
	}
}

func (b *builder) function(name string) *profile.Function {
	fn := b.functions[name]
	if fn == nil {
		fn = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name}
		b.functions[name] = fn
		b.p.Function = append(b.p.Function, fn)
	}
	return fn
}

// addLabels labels sample with the key's parts that are not stacks.
func addLabels(sample *profile.Sample, s output.StackSample) {
	for i, k := range s.Keys {
		name := "key" + strconv.Itoa(i+1)
		if i < len(s.KeyNames) && s.KeyNames[i] != "" {
			name = s.KeyNames[i]
		}
		if n, ok := k.Integer(); ok {
			if sample.NumLabel == nil {
				sample.NumLabel = map[string][]int64{}
			}
			sample.NumLabel[name] = append(sample.NumLabel[name], n)
			continue
		}
		if sample.Label == nil {
			sample.Label = map[string][]string{}
		}
		sample.Label[name] = append(sample.Label[name], output.KeyText(k))
	}
}
