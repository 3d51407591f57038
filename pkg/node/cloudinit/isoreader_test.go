package cloudinit

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path"
)

// isoImage is what the test reader finds in an image.
type isoImage struct {
	volumeID string
	// files maps Rock Ridge paths to contents.
	files map[string][]byte
	// dirs lists the Rock Ridge paths of directories, root "" first, breadth first.
	dirs []string
	// isoNames maps Rock Ridge paths to ISO9660 identifiers.
	isoNames map[string]string
	// modes maps Rock Ridge paths to PX modes.
	modes map[string]uint32
}

// readISO parses an image the way a reader does, checking the structure
// on the way: descriptors, both-endian fields, directory records within
// sectors, "." and ".." links, SUSP/Rock Ridge entries and both path tables.
func readISO(img []byte) (*isoImage, error) {
	if len(img)%sectorSize != 0 || len(img) < 18*sectorSize {
		return nil, fmt.Errorf("image of %d bytes is not whole sectors past the descriptors", len(img))
	}
	pvd := img[16*sectorSize : 17*sectorSize]
	if pvd[0] != 1 || string(pvd[1:6]) != "CD001" || pvd[6] != 1 {
		return nil, fmt.Errorf("no primary volume descriptor")
	}
	term := img[17*sectorSize:]
	if term[0] != 255 || string(term[1:6]) != "CD001" {
		return nil, fmt.Errorf("no descriptor set terminator")
	}
	total, err := both32(pvd[80:88])
	if err != nil {
		return nil, fmt.Errorf("volume space size: %w", err)
	}
	if int(total)*sectorSize != len(img) {
		return nil, fmt.Errorf("volume space size %d sectors, image has %d", total, len(img)/sectorSize)
	}
	if bs, _ := both16(pvd[128:132]); bs != sectorSize {
		return nil, fmt.Errorf("logical block size %d", bs)
	}
	im := &isoImage{
		volumeID: string(bytes.TrimRight(pvd[40:72], " ")),
		files:    map[string][]byte{},
		isoNames: map[string]string{},
		modes:    map[string]uint32{},
	}
	root, err := parseRecord(pvd[156:190])
	if err != nil {
		return nil, fmt.Errorf("root record: %w", err)
	}
	type dirRef struct {
		path        string
		lba, size   uint32
		parentLBA   uint32
		parentIndex int
	}
	type ptEntry struct {
		lba    uint32
		parent int
		id     string
	}
	var want []ptEntry
	queue := []dirRef{{path: "", lba: root.lba, size: root.size, parentLBA: root.lba, parentIndex: 1}}
	for i := 0; i < len(queue); i++ {
		d := queue[i]
		im.dirs = append(im.dirs, d.path)
		id := "\x00"
		if d.path != "" {
			id = im.isoNames[d.path]
		}
		want = append(want, ptEntry{lba: d.lba, parent: d.parentIndex, id: id})
		if uint64(d.lba+sectors(d.size))*sectorSize > uint64(len(img)) {
			return nil, fmt.Errorf("directory %q extent out of the image", d.path)
		}
		extent := img[d.lba*sectorSize : d.lba*sectorSize+d.size]
		for pos, n := 0, 0; pos < len(extent); n++ {
			l := int(extent[pos])
			if l == 0 {
				pos += sectorSize - pos%sectorSize
				continue
			}
			if pos%sectorSize+l > sectorSize {
				return nil, fmt.Errorf("directory %q: record at %d crosses a sector boundary", d.path, pos)
			}
			r, err := parseRecord(extent[pos : pos+l])
			if err != nil {
				return nil, fmt.Errorf("directory %q record %d: %w", d.path, n, err)
			}
			pos += l
			su, err := parseSUSP(r.su, d.path == "" && n == 0)
			if err != nil {
				return nil, fmt.Errorf("directory %q record %d: %w", d.path, n, err)
			}
			switch n {
			case 0:
				if r.id != "\x00" || r.lba != d.lba || !r.dir {
					return nil, fmt.Errorf("directory %q: first record is not its own \".\"", d.path)
				}
				im.modes[d.path] = su.mode
				continue
			case 1:
				if r.id != "\x01" || r.lba != d.parentLBA || !r.dir {
					return nil, fmt.Errorf("directory %q: second record is not \"..\" of its parent", d.path)
				}
				continue
			}
			if su.name == "" {
				return nil, fmt.Errorf("directory %q: record %q has no Rock Ridge name", d.path, r.id)
			}
			p := path.Join(d.path, su.name)
			im.isoNames[p], im.modes[p] = r.id, su.mode
			if r.dir {
				queue = append(queue, dirRef{path: p, lba: r.lba, size: r.size, parentLBA: d.lba, parentIndex: i + 1})
				continue
			}
			if uint64(r.lba)*sectorSize+uint64(r.size) > uint64(len(img)) {
				return nil, fmt.Errorf("file %q out of the image", p)
			}
			im.files[p] = img[r.lba*sectorSize : r.lba*sectorSize+r.size]
		}
	}
	ptSize, err := both32(pvd[132:140])
	if err != nil {
		return nil, fmt.Errorf("path table size: %w", err)
	}
	for _, table := range []struct {
		lba   uint32
		order binary.ByteOrder
	}{{binary.LittleEndian.Uint32(pvd[140:]), binary.LittleEndian}, {binary.BigEndian.Uint32(pvd[148:]), binary.BigEndian}} {
		pt := img[table.lba*sectorSize : table.lba*sectorSize+ptSize]
		var got []ptEntry
		for pos := 0; pos < len(pt); {
			l := int(pt[pos])
			got = append(got, ptEntry{lba: table.order.Uint32(pt[pos+2:]), parent: int(table.order.Uint16(pt[pos+6:])), id: string(pt[pos+8 : pos+8+l])})
			pos += 8 + l + l%2
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return nil, fmt.Errorf("path table %v does not match the directories %v", got, want)
		}
	}
	return im, nil
}

// record is a parsed directory record.
type record struct {
	lba, size uint32
	dir       bool
	id        string
	su        []byte
}

func parseRecord(b []byte) (record, error) {
	if len(b) < 34 || int(b[0]) != len(b) {
		return record{}, fmt.Errorf("bad record length %d", len(b))
	}
	lba, err := both32(b[2:10])
	if err != nil {
		return record{}, fmt.Errorf("extent: %w", err)
	}
	size, err := both32(b[10:18])
	if err != nil {
		return record{}, fmt.Errorf("data length: %w", err)
	}
	idLen := int(b[32])
	if 33+idLen > len(b) {
		return record{}, fmt.Errorf("identifier overruns the record")
	}
	suStart := 33 + idLen + (1 - idLen%2)
	if suStart > len(b) {
		suStart = len(b)
	}
	return record{lba: lba, size: size, dir: b[25]&0x02 != 0, id: string(b[33 : 33+idLen]), su: b[suStart:]}, nil
}

// susp is what the System Use entries of a record say.
type susp struct {
	name string
	mode uint32
}

func parseSUSP(b []byte, rootDot bool) (susp, error) {
	var s susp
	first := true
	for len(b) >= 4 {
		sig, l := string(b[:2]), int(b[2])
		if l < 4 || l > len(b) {
			return s, fmt.Errorf("SUSP entry %q of length %d overruns", sig, l)
		}
		e := b[:l]
		switch sig {
		case "SP":
			if !rootDot || !first || l != 7 || e[4] != 0xbe || e[5] != 0xef {
				return s, fmt.Errorf("misplaced or bad SP entry")
			}
		case "NM":
			s.name += string(e[5:])
		case "PX":
			mode, err := both32(e[4:12])
			if err != nil {
				return s, fmt.Errorf("PX mode: %w", err)
			}
			s.mode = mode
		case "ER":
			if string(e[8:8+int(e[4])]) != "RRIP_1991A" {
				return s, fmt.Errorf("ER names %q", e[8:8+int(e[4])])
			}
		}
		if rootDot && first && sig != "SP" {
			return s, fmt.Errorf("the root's \".\" record does not start with SP")
		}
		first = false
		b = b[l:]
	}
	return s, nil
}

func both32(b []byte) (uint32, error) {
	le, be := binary.LittleEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
	if le != be {
		return 0, fmt.Errorf("both-endian mismatch %d != %d", le, be)
	}
	return le, nil
}

func both16(b []byte) (uint16, error) {
	le, be := binary.LittleEndian.Uint16(b), binary.BigEndian.Uint16(b[2:])
	if le != be {
		return 0, fmt.Errorf("both-endian mismatch %d != %d", le, be)
	}
	return le, nil
}
