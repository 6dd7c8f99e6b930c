package flamegraph

import (
	_ "embed"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"strconv"
	"strings"
)

//go:embed script.js
var script string

// Options are a flame graph's words.
type Options struct {
	Title string
	// Unit names what values count, such as "samples".
	Unit string
}

// The picture's measures, in pixels.
const (
	imageWidth  = 1200
	padX        = 10
	frameHeight = 16
	fontSize    = 12
	// charWidth is about a Verdana character's width, to cut names to fit.
	charWidth  = 0.59 * fontSize
	padTop     = 3 * fontSize
	padBottom  = 2*fontSize + 6
	graphWidth = imageWidth - 2*padX
)

// WriteSVG writes the flame graph of stacks as an SVG file.
func WriteSVG(w io.Writer, stacks []Stack, opts Options) error {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="no"?>` + "\n")
	writeSVG(&b, stacks, opts)
	return write(w, b.String())
}

// WriteHTML writes the flame graph of stacks as an HTML page.
func WriteHTML(w io.Writer, stacks []Stack, opts Options) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>" + html.EscapeString(opts.Title) +
		"</title>\n</head>\n<body style=\"margin: 0\">\n")
	writeSVG(&b, stacks, opts)
	b.WriteString("</body>\n</html>\n")
	return write(w, b.String())
}

func write(w io.Writer, s string) error {
	if _, err := io.WriteString(w, s); err != nil {
		return fmt.Errorf("write flame graph: %w", err)
	}
	return nil
}

// style is the picture's style sheet.
const style = `.frame text { pointer-events: none; }
.frame:hover rect { stroke: black; stroke-width: 0.5; }
.frame { cursor: pointer; }
.parent { opacity: 0.5; }
.button { cursor: pointer; text-decoration: underline; }
.hidden { display: none; }
#search { width: 200px; font: inherit; }
`

func writeSVG(b *strings.Builder, stacks []Stack, opts Options) {
	rects := Layout(stacks, graphWidth)
	depth := 0
	for _, r := range rects {
		depth = max(depth, r.Depth)
	}
	height := padTop + (depth+1)*frameHeight + padBottom
	fmt.Fprintf(b, `<svg version="1.1" xmlns="http://www.w3.org/2000/svg" id="flamegraph" width="%d" height="%d" viewBox="0 0 %d %d" `+
		`font-family="Verdana, sans-serif" font-size="%d" data-width="%d" data-pad="%d" data-char="%g">`+"\n",
		imageWidth, height, imageWidth, height, fontSize, graphWidth, padX, charWidth)
	b.WriteString("<style>\n" + style + "</style>\n")
	fmt.Fprintf(b, `<rect width="100%%" height="100%%" fill="#f8f8f8"/>`+"\n")
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-size="17">%s</text>`+"\n", imageWidth/2, 2*fontSize, html.EscapeString(opts.Title))
	fmt.Fprintf(b, `<text id="reset" class="button hidden" x="%d" y="%d">Reset Zoom</text>`+"\n", padX, 2*fontSize)
	fmt.Fprintf(b, `<foreignObject x="%d" y="%d" width="220" height="%d"><input xmlns="http://www.w3.org/1999/xhtml" id="search" type="search" placeholder="Search (regexp)"/></foreignObject>`+"\n",
		imageWidth-padX-220, fontSize/2, 2*fontSize)
	fmt.Fprintf(b, `<text id="details" x="%d" y="%d"> </text>`+"\n", padX, height-fontSize)
	fmt.Fprintf(b, `<text id="matched" x="%d" y="%d" text-anchor="end"> </text>`+"\n", imageWidth-padX, height-fontSize)
	b.WriteString(`<g id="frames">` + "\n")
	var total int64
	if len(rects) > 0 {
		total = rects[0].Value
	}
	for _, r := range rects {
		writeFrame(b, r, height-padBottom-(r.Depth+1)*frameHeight, total, opts.Unit)
	}
	b.WriteString("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n" + script + "]]></script>\n</svg>\n")
}

// writeFrame writes r, its top at y pixels.
func writeFrame(b *strings.Builder, r Rect, y int, total int64, unit string) {
	name := html.EscapeString(r.Name)
	share := 0.0
	if total > 0 {
		share = 100 * float64(r.Value) / float64(total)
	}
	fmt.Fprintf(b, `<g class="frame" data-x="%.2f" data-w="%.2f" data-d="%d" data-name="%s">`, r.X, r.Width, r.Depth, name)
	fmt.Fprintf(b, `<title>%s (%s %s, %.2f%%)</title>`, name, strconv.FormatInt(r.Value, 10), html.EscapeString(unit), share)
	fmt.Fprintf(b, `<rect x="%.2f" y="%d" width="%.2f" height="%d" rx="2" fill="%s"/>`, padX+r.X, y, r.Width, frameHeight-1, color(r.Frame))
	fmt.Fprintf(b, `<text x="%.2f" y="%d">%s</text></g>`+"\n", padX+r.X+3, y+frameHeight-4, html.EscapeString(label(r.Name, r.Width)))
}

// label is name cut to fit width pixels, as the script cuts it.
func label(name string, width float64) string {
	fit := int((width - 6) / charWidth)
	runes := []rune(name)
	switch {
	case len(runes) <= fit:
		return name
	case fit >= 3:
		return string(runes[:fit-2]) + ".."
	}
	return ""
}

// color is a frame's fill: a shade of its kind's hue picked by its name.
func color(f Frame) string {
	h := fnv.New32a()
	h.Write([]byte(f.Name))
	sum := h.Sum32()
	v1, v3 := float64(sum&0xff)/255, float64(sum>>16&0xff)/255
	var r, g, b float64
	switch f.Kind {
	case User: // flamegraph.pl's "red", for user code
		r, g, b = 200+55*v1, 50+80*v1, 50+80*v1
	case Kernel: // orange
		r, g, b = 190+65*v3, 90+65*v1, 0
	default: // grey
		r, g, b = 170+40*v1, 170+40*v1, 180+40*v1
	}
	return fmt.Sprintf("rgb(%d,%d,%d)", int(r), int(g), int(b))
}
