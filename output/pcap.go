package output

import (
	"encoding/binary"
	"os"
	"time"
)

// Pcap writes packets to a pcap file of raw IP packets, as tcpdump
// reads them.
type Pcap struct{ f *os.File }

// pcapSnaplen is the largest packet the file says it holds.
const pcapSnaplen = 65535

// linktypeRaw is LINKTYPE_RAW: packets start at their IP header.
const linktypeRaw = 101

// NewPcap writes the file header of a pcap file to f.
func NewPcap(f *os.File) (*Pcap, error) {
	hdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b2c3d4) // microsecond timestamps
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], pcapSnaplen)
	binary.LittleEndian.PutUint32(hdr[20:], linktypeRaw)
	if _, err := f.Write(hdr); err != nil {
		return nil, err
	}
	return &Pcap{f: f}, nil
}

// Write appends a packet captured at time at.
func (p *Pcap) Write(at time.Time, pkt []byte) error {
	rec := make([]byte, 16, 16+len(pkt))
	binary.LittleEndian.PutUint32(rec[0:], uint32(at.Unix()))
	binary.LittleEndian.PutUint32(rec[4:], uint32(at.Nanosecond()/1000))
	binary.LittleEndian.PutUint32(rec[8:], uint32(len(pkt)))
	binary.LittleEndian.PutUint32(rec[12:], uint32(len(pkt)))
	_, err := p.f.Write(append(rec, pkt...))
	return err
}

// Close closes the file.
func (p *Pcap) Close() error { return p.f.Close() }
