package enter

// sysSetns is setns(2) on amd64 (the syscall package predates it).
const sysSetns = 308
