package virt

import (
	"bytes"
	"encoding/xml"
	"strings"
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
