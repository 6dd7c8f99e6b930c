package calltrace

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// chromeFile is the JSON object form of the Chrome Trace Event format.
type chromeFile struct {
	TraceEvents     []chromeEvent `json:"traceEvents"`
	DisplayTimeUnit string        `json:"displayTimeUnit"`
	OtherData       otherData     `json:"otherData"`
}

type otherData struct {
	Command string   `json:"command"`
	Struct  string   `json:"struct,omitempty"`
	Fields  []string `json:"fields,omitempty"`
	StartNs uint64   `json:"start_ns,string"`
}

type chromeEvent struct {
	Name string `json:"name"`
	Cat  string `json:"cat,omitempty"`
	Ph   string `json:"ph"`
	// Ts is in microseconds, written with nanosecond decimals.
	Ts   json.Number    `json:"ts"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// micros writes ns, relative to start, as microseconds with three
// decimals, so that no precision is lost to a float.
func micros(ns, start uint64) json.Number {
	d := ns - start
	return json.Number(fmt.Sprintf("%d.%03d", d/1000, d%1000))
}

// WriteChrome writes r in the Chrome Trace Event format, as doc.go
// describes it.
func (r *Recording) WriteChrome(w io.Writer) error {
	f := chromeFile{DisplayTimeUnit: "ns",
		OtherData: otherData{Command: r.Command, Struct: r.Struct, Fields: r.Fields, StartNs: r.Start}}
	cat := r.Command
	for _, t := range r.Tracks {
		f.TraceEvents = append(f.TraceEvents,
			chromeEvent{Name: "process_name", Ph: "M", Ts: "0", Pid: t.ID, Args: map[string]any{"name": t.Name}},
			chromeEvent{Name: "process_sort_index", Ph: "M", Ts: "0", Pid: t.ID, Args: map[string]any{"sort_index": t.ID}})
		end := t.End()
		named := map[int]bool{}
		// A call whose exit was not seen ends where its caller ends:
		// it can not outlast it.
		var write func(c *Call, callerEnd uint64)
		write = func(c *Call, callerEnd uint64) {
			if !named[c.Tid] {
				named[c.Tid] = true
				f.TraceEvents = append(f.TraceEvents, chromeEvent{Name: "thread_name", Ph: "M", Ts: "0", Pid: t.ID, Tid: c.Tid,
					Args: map[string]any{"name": c.Comm + " " + strconv.Itoa(c.Tid)}})
			}
			args := map[string]any{"cpu": c.CPU, "pid": c.Pid, "tid": c.Tid, "comm": c.Comm}
			if len(c.Fields) > 0 {
				fields := map[string]string{}
				for i, v := range c.Fields {
					if i < len(r.Fields) {
						fields[r.Fields[i]] = v
					}
				}
				args["fields"] = fields
			}
			f.TraceEvents = append(f.TraceEvents, chromeEvent{Name: c.Func, Cat: cat, Ph: "B", Ts: micros(c.Entry, r.Start), Pid: t.ID, Tid: c.Tid, Args: args})
			exit, endArgs := c.Exit, map[string]any(nil)
			if exit == 0 {
				exit, endArgs = callerEnd, map[string]any{"unfinished": true}
			}
			for _, in := range c.Calls {
				write(in, exit)
			}
			f.TraceEvents = append(f.TraceEvents, chromeEvent{Name: c.Func, Cat: cat, Ph: "E", Ts: micros(exit, r.Start), Pid: t.ID, Tid: c.Tid, Args: endArgs})
		}
		for _, c := range t.Calls {
			write(c, end)
		}
	}
	// Viewers want each lane's events in time order; a stable sort keeps
	// a call's B before its children's and their E before its own.
	sort.SliceStable(f.TraceEvents, func(i, j int) bool {
		a, b := f.TraceEvents[i], f.TraceEvents[j]
		if a.Pid != b.Pid {
			return a.Pid < b.Pid
		}
		if (a.Ph == "M") != (b.Ph == "M") {
			return a.Ph == "M"
		}
		return tsLess(a.Ts, b.Ts)
	})
	enc := json.NewEncoder(w)
	return enc.Encode(&f)
}

func tsLess(a, b json.Number) bool {
	x, _ := a.Float64()
	y, _ := b.Float64()
	return x < y
}
