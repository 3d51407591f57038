package cloudinit

import (
	"encoding/binary"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

// sectorSize is the ISO9660 logical block size.
const sectorSize = 2048

// MaxImageSize is the sanity cap of an image (cloud-init data is small;
// the cap only stops runaway input).
const MaxImageSize = 256 << 20

// padSectors are zero sectors at the end of every image (part of the
// volume), as mkisofs adds by default: small readers probe past the data
// (busybox's volume_id, used by findfs in small guests, reads the first
// 68 KiB at once and finds no label on a shorter device), and old drives
// read ahead past the last file.
const padSectors = 150

// maxImageSize is MaxImageSize; tests lower it.
var maxImageSize uint64 = MaxImageSize

// maxNameLen caps a path component so that a directory record (ISO name,
// Rock Ridge entries) fits its 255 bytes.
const maxNameLen = 120

// maxDepth caps the directory depth (ISO9660 allows 8 levels).
const maxDepth = 8

// File is a file of an image: a slash-separated relative path and its content.
type File struct {
	// Path is e.g. "openstack/latest/user_data".
	Path string
	// Data is the content.
	Data []byte
}

// node is a file or directory of the image tree.
type node struct {
	name     string // real name (Rock Ridge NM)
	isoName  string // ISO9660 identifier
	dir      bool
	data     []byte
	children []*node
	parent   *node
	number   int    // directory number in the path table (from 1)
	lba      uint32 // first sector of the extent
	size     uint32 // extent size in bytes
}

// BuildISO writes an ISO9660 image with Rock Ridge names holding files,
// with the given volume identifier (the filesystem label; at most 32
// printable ASCII characters, e.g. "cidata"). Directories are created as
// the paths need them. modTime stamps every record; the zero time means
// the Unix epoch, which makes the output depend on the input only.
func BuildISO(volumeID string, files []File, modTime time.Time) ([]byte, error) {
	if err := checkVolumeID(volumeID); err != nil {
		return nil, err
	}
	if modTime.IsZero() {
		modTime = time.Unix(0, 0)
	}
	modTime = modTime.UTC()
	if y := modTime.Year(); y < 1900 || y > 2155 {
		return nil, fmt.Errorf("iso9660: time %s cannot be recorded (years 1900 to 2155)", modTime)
	}
	root, err := buildTree(files)
	if err != nil {
		return nil, err
	}
	dirs := directories(root)
	pathTableSize := pathTableLen(dirs)
	ptSectors := sectors(pathTableSize)

	// Layout: system area (16 sectors), primary volume descriptor,
	// terminator, L and M path tables, directories, file data, padding.
	lba := uint32(16 + 2)
	lPathTable := lba
	lba += ptSectors
	mPathTable := lba
	lba += ptSectors
	for _, d := range dirs {
		d.size = dirExtentLen(d)
		d.lba = lba
		lba += sectors(d.size)
	}
	for _, d := range dirs {
		for _, c := range d.children {
			if c.dir {
				continue
			}
			if uint64(len(c.data)) > maxImageSize {
				return nil, fmt.Errorf("iso9660: a file of %d bytes is over the %d byte cap", len(c.data), maxImageSize)
			}
			c.lba, c.size = lba, uint32(len(c.data))
			lba += sectors(c.size)
		}
	}
	lba += padSectors
	total := uint64(lba) * sectorSize
	if total > maxImageSize {
		return nil, fmt.Errorf("iso9660: the image would be %d bytes, more than the %d byte cap", total, maxImageSize)
	}

	img := make([]byte, total)
	writePVD(img[16*sectorSize:], volumeID, lba, pathTableSize, lPathTable, mPathTable, root, modTime)
	copy(img[17*sectorSize:], []byte{255, 'C', 'D', '0', '0', '1', 1})
	writePathTable(img[lPathTable*sectorSize:], dirs, binary.LittleEndian)
	writePathTable(img[mPathTable*sectorSize:], dirs, binary.BigEndian)
	for _, d := range dirs {
		writeDirectory(img[d.lba*sectorSize:], d, modTime)
		for _, c := range d.children {
			if !c.dir {
				copy(img[c.lba*sectorSize:], c.data)
			}
		}
	}
	return img, nil
}

// checkVolumeID refuses labels that do not fit the descriptor.
func checkVolumeID(id string) error {
	if id == "" || len(id) > 32 {
		return fmt.Errorf("iso9660: volume identifier %q must be 1 to 32 characters", id)
	}
	for _, r := range id {
		if r < 0x20 || r > 0x7e {
			return fmt.Errorf("iso9660: volume identifier %q must be printable ASCII", id)
		}
	}
	return nil
}

// buildTree checks the paths and arranges them as a tree with ISO names.
func buildTree(files []File) (*node, error) {
	root := &node{dir: true}
	for _, f := range files {
		parts, err := splitPath(f.Path)
		if err != nil {
			return nil, err
		}
		if len(parts) > maxDepth {
			return nil, fmt.Errorf("iso9660: %q is nested deeper than %d levels", f.Path, maxDepth)
		}
		dir := root
		for i, part := range parts {
			last := i == len(parts)-1
			child := dir.child(part)
			switch {
			case child == nil:
				child = &node{name: part, dir: !last, parent: dir}
				if last {
					child.data = f.Data
				}
				dir.children = append(dir.children, child)
			case last:
				return nil, fmt.Errorf("iso9660: %q is given twice or is also a directory", f.Path)
			case !child.dir:
				return nil, fmt.Errorf("iso9660: %q needs %q to be a directory, but it is a file", f.Path, child.name)
			}
			dir = child
		}
	}
	assignISONames(root)
	return root, nil
}

// splitPath splits a relative slash path into checked components.
func splitPath(p string) ([]string, error) {
	if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p {
		return nil, fmt.Errorf("iso9660: path %q must be a clean relative path", p)
	}
	parts := strings.Split(p, "/")
	for _, part := range parts {
		if part == "." || part == ".." || len(part) > maxNameLen {
			return nil, fmt.Errorf("iso9660: path %q has a bad component %q (at most %d bytes, not . or ..)", p, part, maxNameLen)
		}
		for _, r := range part {
			if r < 0x20 || r == 0x7f {
				return nil, fmt.Errorf("iso9660: path %q has a control character", p)
			}
		}
	}
	return parts, nil
}

func (n *node) child(name string) *node {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// assignISONames gives every node a unique ISO9660 level-2 identifier
// (d-characters, at most 31 characters) and sorts children by it.
func assignISONames(d *node) {
	used := map[string]bool{}
	for _, c := range d.children {
		base := isoIdentifier(c.name, c.dir)
		name := base
		for i := 1; used[name]; i++ {
			name = uniquify(base, i, c.dir)
		}
		used[name] = true
		c.isoName = name
		if c.dir {
			assignISONames(c)
		}
	}
	sort.Slice(d.children, func(i, j int) bool { return d.children[i].isoName < d.children[j].isoName })
}

// dChars maps a name to ISO9660 d-characters (A-Z, 0-9, _).
func dChars(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// isoIdentifier is the ISO name of a directory (NAME) or file (NAME.EXT;1).
func isoIdentifier(name string, dir bool) string {
	if dir {
		return truncate(dChars(name), 31)
	}
	base, ext := name, ""
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		base, ext = name[:i], name[i+1:]
	}
	ext = truncate(dChars(ext), 3)
	base = truncate(dChars(base), 30-len(ext))
	return base + "." + ext + ";1"
}

// uniquify makes the i-th alternative of a taken ISO name.
func uniquify(name string, i int, dir bool) string {
	suffix := fmt.Sprintf("_%d", i)
	if dir {
		return truncate(name, 31-len(suffix)) + suffix
	}
	dot := strings.IndexByte(name, '.')
	base, rest := name[:dot], name[dot:]
	return truncate(base, 30-(len(rest)-3)-len(suffix)) + suffix + rest
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// directories lists the directories breadth first, numbered from 1: the
// order of the path table (by level, then parent, then name).
func directories(root *node) []*node {
	dirs := []*node{root}
	for i := 0; i < len(dirs); i++ {
		dirs[i].number = i + 1
		for _, c := range dirs[i].children {
			if c.dir {
				dirs = append(dirs, c)
			}
		}
	}
	return dirs
}

// subdirs counts the subdirectories of d (for link counts).
func subdirs(d *node) uint32 {
	n := uint32(0)
	for _, c := range d.children {
		if c.dir {
			n++
		}
	}
	return n
}

func sectors(size uint32) uint32 {
	return (size + sectorSize - 1) / sectorSize
}

// recordLen is the length of a directory record with an identifier of
// idLen bytes and suLen bytes of System Use, padded to an even length.
func recordLen(idLen, suLen int) int {
	n := 33 + idLen
	if idLen%2 == 0 {
		n++
	}
	n += suLen
	return n + n%2
}

// dirRecords are the records of directory d: ".", "..", then the children.
func dirRecords(d *node, modTime time.Time) [][]byte {
	links := 2 + subdirs(d)
	parent := d.parent
	if parent == nil {
		parent = d
	}
	su := dotSU(links)
	if d.parent == nil {
		su = rootSU(links)
	}
	records := [][]byte{
		dirRecord([]byte{0}, d.lba, d.size, true, su, modTime),
		dirRecord([]byte{1}, parent.lba, parent.size, true, dotSU(2+subdirs(parent)), modTime),
	}
	for _, c := range d.children {
		links := uint32(1)
		if c.dir {
			links = 2 + subdirs(c)
		}
		records = append(records, dirRecord([]byte(c.isoName), c.lba, c.size, c.dir, namedSU(c.name, c.dir, links), modTime))
	}
	return records
}

// dirExtentLen is the size of d's extent: its records, none crossing a
// sector boundary, rounded up to whole sectors.
func dirExtentLen(d *node) uint32 {
	lens := []int{recordLen(1, len(rootSU(0))), recordLen(1, len(dotSU(0)))}
	if d.parent != nil {
		lens[0] = recordLen(1, len(dotSU(0)))
	}
	for _, c := range d.children {
		lens = append(lens, recordLen(len(c.isoName), rockRidgeLen(c.name)))
	}
	offset := 0
	for _, l := range lens {
		if offset%sectorSize+l > sectorSize {
			offset += sectorSize - offset%sectorSize
		}
		offset += l
	}
	return sectors(uint32(offset)) * sectorSize
}

// writeDirectory writes d's records into its extent.
func writeDirectory(extent []byte, d *node, modTime time.Time) {
	offset := 0
	for _, r := range dirRecords(d, modTime) {
		if offset%sectorSize+len(r) > sectorSize {
			offset += sectorSize - offset%sectorSize
		}
		copy(extent[offset:], r)
		offset += len(r)
	}
}

// dirRecord encodes one directory record (ECMA-119 9.1).
func dirRecord(id []byte, lba, size uint32, dir bool, su []byte, modTime time.Time) []byte {
	n := recordLen(len(id), len(su))
	r := make([]byte, 0, n)
	r = append(r, byte(n), 0)
	r = appendBoth32(r, lba)
	r = appendBoth32(r, size)
	r = append(r, recordDate(modTime)...)
	flags := byte(0)
	if dir {
		flags = 0x02
	}
	r = append(r, flags, 0, 0)
	r = appendBoth16(r, 1)
	r = append(r, byte(len(id)))
	r = append(r, id...)
	if len(id)%2 == 0 {
		r = append(r, 0)
	}
	r = append(r, su...)
	for len(r) < n {
		r = append(r, 0)
	}
	return r
}

// recordDate is the 7-byte date of a directory record, in UTC.
func recordDate(t time.Time) []byte {
	return []byte{byte(t.Year() - 1900), byte(t.Month()), byte(t.Day()), byte(t.Hour()), byte(t.Minute()), byte(t.Second()), 0}
}

// descriptorDate is the 17-byte date of a volume descriptor, in UTC.
func descriptorDate(t time.Time) []byte {
	return append([]byte(t.Format("20060102150405")+"00"), 0)
}

// pathTableLen is the size in bytes of one path table.
func pathTableLen(dirs []*node) uint32 {
	n := uint32(0)
	for _, d := range dirs {
		idLen := len(d.isoName)
		if d.parent == nil {
			idLen = 1
		}
		n += uint32(8 + idLen + idLen%2)
	}
	return n
}

// writePathTable writes the L (little-endian) or M (big-endian) path table.
func writePathTable(b []byte, dirs []*node, order binary.ByteOrder) {
	offset := 0
	for _, d := range dirs {
		id, parent := []byte(d.isoName), 1
		if d.parent == nil {
			id = []byte{0}
		} else {
			parent = d.parent.number
		}
		b[offset] = byte(len(id))
		order.PutUint32(b[offset+2:], d.lba)
		order.PutUint16(b[offset+6:], uint16(parent))
		copy(b[offset+8:], id)
		offset += 8 + len(id) + len(id)%2
	}
}

// writePVD writes the primary volume descriptor (ECMA-119 8.4).
func writePVD(b []byte, volumeID string, totalSectors, pathTableSize, lPathTable, mPathTable uint32, root *node, modTime time.Time) {
	b[0] = 1
	copy(b[1:], "CD001")
	b[6] = 1
	copy(b[8:40], padded("LINUX", 32))
	copy(b[40:72], padded(volumeID, 32))
	putBoth32(b[80:], totalSectors)
	putBoth16(b[120:], 1)
	putBoth16(b[124:], 1)
	putBoth16(b[128:], sectorSize)
	putBoth32(b[132:], pathTableSize)
	binary.LittleEndian.PutUint32(b[140:], lPathTable)
	binary.BigEndian.PutUint32(b[148:], mPathTable)
	copy(b[156:190], dirRecord([]byte{0}, root.lba, root.size, true, nil, modTime))
	copy(b[190:318], padded("", 128))                       // volume set
	copy(b[318:446], padded("", 128))                       // publisher
	copy(b[446:574], padded("", 128))                       // data preparer
	copy(b[574:702], padded("NATIVEVIRT", 128))             // application
	copy(b[702:813], padded("", 111))                       // copyright, abstract, bibliographic files
	copy(b[813:830], descriptorDate(modTime))               // creation
	copy(b[830:847], descriptorDate(modTime))               // modification
	copy(b[847:864], append([]byte("0000000000000000"), 0)) // expiration: none
	copy(b[864:881], append([]byte("0000000000000000"), 0)) // effective: none
	b[881] = 1
}

func padded(s string, n int) []byte {
	return []byte(s + strings.Repeat(" ", n-len(s)))
}

func appendBoth32(b []byte, v uint32) []byte {
	b = binary.LittleEndian.AppendUint32(b, v)
	return binary.BigEndian.AppendUint32(b, v)
}

func appendBoth16(b []byte, v uint16) []byte {
	b = binary.LittleEndian.AppendUint16(b, v)
	return binary.BigEndian.AppendUint16(b, v)
}

func putBoth32(b []byte, v uint32) {
	binary.LittleEndian.PutUint32(b, v)
	binary.BigEndian.PutUint32(b[4:], v)
}

func putBoth16(b []byte, v uint16) {
	binary.LittleEndian.PutUint16(b, v)
	binary.BigEndian.PutUint16(b[2:], v)
}
