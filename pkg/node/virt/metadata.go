package virt

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strings"

	"libvirt.org/go/libvirt"
)

// MetadataUID returns the VMI uid recorded in the <metadata> element of a
// domain's XML: the text of the first element named "uid" (any namespace)
// below <metadata>, or a "uid" attribute on an element there. It returns ""
// when there is none or the XML does not parse. Matching by local name keeps
// the agent independent of the exact namespace URI the converter chose.
func MetadataUID(domainXML []byte) string {
	dec := xml.NewDecoder(bytes.NewReader(domainXML))
	depth, metaDepth := 0, -1
	inUID := false
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if metaDepth < 0 {
				if depth == 2 && t.Name.Local == "metadata" {
					metaDepth = depth
				}
				continue
			}
			if t.Name.Local == "uid" {
				inUID = true
				text.Reset()
				continue
			}
			for _, a := range t.Attr {
				if a.Name.Local == "uid" && a.Value != "" {
					return strings.TrimSpace(a.Value)
				}
			}
		case xml.CharData:
			if inUID {
				text.Write(t)
			}
		case xml.EndElement:
			if inUID {
				return strings.TrimSpace(text.String())
			}
			if depth == metaDepth {
				return ""
			}
			depth--
		}
	}
}

// Notes keeps small values with a running domain, in its live <metadata> (libvirt's metadata
// elements, one namespace per key): they live as long as the domain, in its launcher's libvirt,
// so they outlive a restart of the node agent and go with the guest.
type Notes interface {
	// SetNote stores value under key; "" removes it.
	SetNote(name, key, value string) error
	// Note returns the value under key, "" when there is none.
	Note(name, key string) (string, error)
}

// noteNamespace is the XML namespace of a note's element.
func noteNamespace(key string) string { return "https://nativevirt.io/xmlns/note/" + key }

type noteElement struct {
	XMLName xml.Name `xml:"note"`
	Value   string   `xml:",chardata"`
}

// SetNote implements Notes.
func (c notesConn) SetNote(name, key, value string) error {
	return c.do(name, "setting note "+key+" of", func(d *libvirt.Domain) error {
		if value == "" {
			return d.SetMetadata(libvirt.DOMAIN_METADATA_ELEMENT, "", "", noteNamespace(key), libvirt.DOMAIN_AFFECT_LIVE)
		}
		raw, err := xml.Marshal(noteElement{Value: value})
		if err != nil {
			return err
		}
		return d.SetMetadata(libvirt.DOMAIN_METADATA_ELEMENT, string(raw), "nv", noteNamespace(key), libvirt.DOMAIN_AFFECT_LIVE)
	})
}

// Note implements Notes.
func (c notesConn) Note(name, key string) (string, error) {
	var value string
	err := c.do(name, "reading note "+key+" of", func(d *libvirt.Domain) error {
		raw, err := d.GetMetadata(libvirt.DOMAIN_METADATA_ELEMENT, noteNamespace(key), libvirt.DOMAIN_AFFECT_LIVE)
		var lerr libvirt.Error
		if errors.As(err, &lerr) && lerr.Code == libvirt.ERR_NO_DOMAIN_METADATA {
			return nil
		}
		if err != nil {
			return err
		}
		var n noteElement
		if err := xml.Unmarshal([]byte(raw), &n); err != nil {
			return err
		}
		value = n.Value
		return nil
	})
	return value, err
}
