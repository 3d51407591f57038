package enter

// sysSetns is setns(2) on arm64 (the syscall package predates it).
const sysSetns = 268
