package apiserver

// storedVM is a VirtualMachine as etcd holds it (the storage package's tests decode the same one).
const storedVM = `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine",
"metadata":{"name":"vm1","namespace":"ns","uid":"3f0e","resourceVersion":"7","generation":1,
 "creationTimestamp":"2026-11-22T10:00:00Z","labels":{"app":"web","kind":"not-this"},
 "managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"kubevirt.io/v1",
  "time":"2026-11-22T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:runStrategy":{}}}}]},
"spec":{"runStrategy":"Halted","template":{"metadata":{"labels":{"kubevirt.io/vm":"vm1"}},
 "spec":{"domain":{"devices":{"disks":[{"name":"root","disk":{"bus":"virtio"}}]},
  "resources":{"requests":{"memory":"128Mi"}}},
  "volumes":[{"name":"root","containerDisk":{"image":"quay.io/containerdisks/fedora:40"}}]}}},
"status":{"printableStatus":"Stopped"}}`
