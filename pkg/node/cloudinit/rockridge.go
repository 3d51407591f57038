package cloudinit

// Rock Ridge (RRIP 1.09) on the System Use Sharing Protocol (SUSP 1.10):
// each directory record carries, after its ISO name, entries giving the
// POSIX attributes (PX) and the real file name (NM). The root directory's
// "." record announces SUSP (SP) and names the extension (ER).

// POSIX file modes of the image's files and directories.
const (
	modeFile = 0o100444
	modeDir  = 0o040555
)

// RR entry flags: which RRIP entries the record carries.
const (
	rrFlagPX = 0x01
	rrFlagNM = 0x08
)

// The ER entry of RRIP 1.09. The descriptor and source texts are free text;
// readers match the identifier.
const (
	rripID         = "RRIP_1991A"
	rripDescriptor = "THE ROCK RIDGE INTERCHANGE PROTOCOL PROVIDES SUPPORT FOR POSIX FILE SYSTEM SEMANTICS"
	rripSource     = "SEE RRIP 1.09"
)

// suEntry starts a System Use entry: signature, length, version 1.
func suEntry(sig string, length int) []byte {
	return []byte{sig[0], sig[1], byte(length), 1}
}

// spEntry announces SUSP, with no bytes skipped.
func spEntry() []byte {
	return append(suEntry("SP", 7), 0xbe, 0xef, 0)
}

// erEntry names the RRIP extension.
func erEntry() []byte {
	b := suEntry("ER", 8+len(rripID)+len(rripDescriptor)+len(rripSource))
	b = append(b, byte(len(rripID)), byte(len(rripDescriptor)), byte(len(rripSource)), 1)
	b = append(b, rripID...)
	b = append(b, rripDescriptor...)
	return append(b, rripSource...)
}

// rrEntry lists the RRIP entries of a record (RRIP 1.09).
func rrEntry(flags byte) []byte {
	return append(suEntry("RR", 5), flags)
}

// pxEntry gives POSIX mode, link count, owner and group (root).
func pxEntry(mode, links uint32) []byte {
	b := suEntry("PX", 36)
	b = appendBoth32(b, mode)
	b = appendBoth32(b, links)
	b = appendBoth32(b, 0)
	return appendBoth32(b, 0)
}

// nmEntry gives the real name of a file or directory.
func nmEntry(name string) []byte {
	b := suEntry("NM", 5+len(name))
	b = append(b, 0)
	return append(b, name...)
}

// nmEntryLen is the length of nmEntry(name).
func nmEntryLen(name string) int { return 5 + len(name) }

// rockRidgeLen is the System Use length of a named record (RR, PX, NM).
func rockRidgeLen(name string) int { return 5 + 36 + nmEntryLen(name) }

// rootSU is the System Use area of the root directory's "." record.
func rootSU(links uint32) []byte {
	b := spEntry()
	b = append(b, rrEntry(rrFlagPX)...)
	b = append(b, pxEntry(modeDir, links)...)
	return append(b, erEntry()...)
}

// dotSU is the System Use area of a "." or ".." record other than the root's ".".
func dotSU(links uint32) []byte {
	b := rrEntry(rrFlagPX)
	return append(b, pxEntry(modeDir, links)...)
}

// namedSU is the System Use area of a file or directory record.
func namedSU(name string, dir bool, links uint32) []byte {
	mode := uint32(modeFile)
	if dir {
		mode = modeDir
	}
	b := rrEntry(rrFlagPX | rrFlagNM)
	b = append(b, pxEntry(mode, links)...)
	return append(b, nmEntry(name)...)
}
