#ifndef IBSM_ISSM_H
#define IBSM_ISSM_H
#ifdef __cplusplus
extern "C" {
#endif
/* Returns the fd, or -errno. */
int ibsm_issm_open(const char *path);
/* Returns 0, or -errno. */
int ibsm_issm_close(int fd);
#ifdef __cplusplus
}
#endif
#endif
