#ifndef IBSM_UMAD2SIM_EXIT_H
#define IBSM_UMAD2SIM_EXIT_H
#ifdef __cplusplus
extern "C" {
#endif
/* Under the umad2sim preload (ibsim), at process exit: detach this process from ibsim and let
 * umad2sim's receiver thread take what is already on its way, so that umad2sim's own atexit
 * clean-up finds that thread waiting in poll(). Returns 1 when detached, 0 when not under umad2sim
 * (or ibsim is gone), -errno on a failure. See umad2sim-exit.c. */
int ibsm_umad2sim_quiesce(int timeout_ms);
#ifdef __cplusplus
}
#endif
#endif
