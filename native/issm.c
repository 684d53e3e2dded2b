/* Opening the issm device (which marks this port as running an SM) with the plain open()/close()
 * symbols. node-gyp builds with _FILE_OFFSET_BITS=64, which turns open() into open64(); the umad2sim
 * preload (ibsim) only intercepts open(), so this one file is built without large-file aliases. */
#undef _FILE_OFFSET_BITS
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "issm.h"

/* O_NONBLOCK: the kernel lets one process hold a port's issm device; another SM holding it
 * (OpenSM, another ibsm) fails the open with EAGAIN at once instead of blocking until it lets go
 * (api/sm-port-lock.ts turns that into a clear refusal). */
int ibsm_issm_open(const char *path)
{
	int fd = open(path, O_RDWR | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

int ibsm_issm_close(int fd)
{
	return close(fd) < 0 ? -errno : 0;
}
