package virt

import (
	"encoding/xml"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"libvirt.org/go/libvirt"
)

// migrateFlags are the flags of every migration: live, driven by the source
// daemon itself (peer to peer: the client only starts it, and the source
// guest stays paused when the destination cannot confirm the switch-over),
// persistent on the destination, and undefined on the source once done.
const migrateFlags = libvirt.MIGRATE_LIVE | libvirt.MIGRATE_PEER2PEER |
	libvirt.MIGRATE_PERSIST_DEST | libvirt.MIGRATE_UNDEFINE_SOURCE

// Migrate implements Migrator with virDomainMigrateToURI3.
func (c migratorConn) Migrate(name string, p MigrateParams) error {
	return c.withDomain(name, func(d *libvirt.Domain) error {
		x, err := d.GetXMLDesc(0)
		if err != nil {
			return wrap(name, "reading the disks of", err)
		}
		disks, err := DisksToCopy([]byte(x), p.CopyDisksUnder)
		if err != nil {
			return fmt.Errorf("migrating domain %s: %w", name, err)
		}
		params := &libvirt.DomainMigrateParameters{URISet: true, URI: p.MigrationURI}
		if p.BandwidthMiB > 0 {
			params.BandwidthSet, params.Bandwidth = true, p.BandwidthMiB
		}
		flags := migrateFlags
		if p.SharedDisks {
			flags |= libvirt.MIGRATE_UNSAFE
		}
		if len(disks) > 0 {
			// Only the top image: the destination has the same backing images.
			flags |= libvirt.MIGRATE_NON_SHARED_INC
			params.MigrateDisksSet, params.MigrateDisks = true, disks
			params.DisksURISet, params.DisksURI = true, p.DisksURI
		}
		if err := d.MigrateToURI3(p.DestURI, params, flags); err != nil {
			var lerr libvirt.Error
			if errors.As(err, &lerr) && lerr.Code == libvirt.ERR_OPERATION_ABORTED {
				return fmt.Errorf("migrating domain %s: %w (%s)", name, ErrAborted, lerr.Message)
			}
			return wrap(name, "migrating", err)
		}
		return nil
	})
}

// JobStats implements Migrator.
func (c migratorConn) JobStats(name string, completed bool) (JobStats, error) {
	var out JobStats
	err := c.do(name, "reading the job of", func(d *libvirt.Domain) error {
		var flags libvirt.DomainGetJobStatsFlags
		if completed {
			flags = libvirt.DOMAIN_JOB_STATS_COMPLETED
		}
		j, err := d.GetJobStats(flags)
		if err != nil {
			return err
		}
		out = JobStats{
			Active:          j.Type != libvirt.DOMAIN_JOB_NONE,
			Elapsed:         time.Duration(j.TimeElapsed) * time.Millisecond,
			Downtime:        time.Duration(j.Downtime) * time.Millisecond,
			DataTotal:       j.DataTotal,
			DataProcessed:   j.DataProcessed,
			DataRemaining:   j.DataRemaining,
			MemoryTotal:     j.MemTotal,
			MemoryProcessed: j.MemProcessed,
			DiskTotal:       j.DiskTotal,
			DiskProcessed:   j.DiskProcessed,
			Iterations:      j.MemIteration,
		}
		return nil
	})
	return out, err
}

// AbortJob implements Migrator.
func (c migratorConn) AbortJob(name string) error {
	return c.do(name, "aborting the job of", func(d *libvirt.Domain) error { return d.AbortJob() })
}

// diskXML is what DisksToCopy reads of a <disk>.
type diskXML struct {
	Type   string `xml:"type,attr"`
	Device string `xml:"device,attr"`
	Source struct {
		File string `xml:"file,attr"`
		Dev  string `xml:"dev,attr"`
	} `xml:"source"`
	Target struct {
		Dev string `xml:"dev,attr"`
	} `xml:"target"`
	ReadOnly  *struct{} `xml:"readonly"`
	Shareable *struct{} `xml:"shareable"`
}

// DisksToCopy lists the target names (vda, sdb, ...) of the domain's disks a
// block migration must copy: writable, not shareable, and backed by a file in
// dir. Read-only disks (a cloud-init CD-ROM) are made again on the
// destination and need no copy; disks outside dir are on shared storage.
func DisksToCopy(domainXML []byte, dir string) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	var dom struct {
		Disks []diskXML `xml:"devices>disk"`
	}
	if err := xml.Unmarshal(domainXML, &dom); err != nil {
		return nil, fmt.Errorf("parsing the domain XML: %w", err)
	}
	dir = path.Clean(dir) + "/"
	var out []string
	for _, d := range dom.Disks {
		if d.Type != "file" || d.ReadOnly != nil || d.Shareable != nil || d.Device == "cdrom" || d.Device == "floppy" {
			continue
		}
		if !strings.HasPrefix(path.Clean(d.Source.File), dir) {
			continue
		}
		if d.Target.Dev == "" {
			return nil, fmt.Errorf("disk %s has no target device", d.Source.File)
		}
		out = append(out, d.Target.Dev)
	}
	return out, nil
}
