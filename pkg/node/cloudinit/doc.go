// Package cloudinit builds the cloud-init disks of a VirtualMachineInstance:
// NoCloud (an ISO9660 image labelled "cidata" holding user-data, meta-data
// and network-config) and ConfigDrive (labelled "config-2", holding
// openstack/latest/{user_data,meta_data.json,network_data.json}).
//
// The ISO9660 writer is pure Go and small: a primary volume descriptor,
// path tables, directory records and Rock Ridge (RRIP 1.09) entries, so
// that file names like "user-data" keep their spelling in the guest. There
// is no size limit beyond a sanity cap: user data of megabytes is fine.
//
// Everything here is pure: the node agent resolves secrets, writes the
// image into the launcher pod's disks directory, and the domain converter
// (package convert) points the guest's disk at it.
package cloudinit
