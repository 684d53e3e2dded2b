// ibsm's native face over libibumad: enumerate CAs and ports, open a port (and its issm device),
// register agents, send a MAD with its address, and receive on one native thread per open port.
//
// Received MADs reach JS in batches through a thread-safe function: the receiver thread appends
// each MAD to a pending batch and wakes the main thread only when the batch was empty, so a busy
// event loop takes many MADs per wake-up. A batch is one Buffer with the MAD bytes back to back
// and one Uint32Array with RECORD.stride words per MAD (indices exported as RECORD).
//
// Sends never block the event loop. On a kernel's umad device send() calls umad_send itself when
// nothing is queued (its write posts the MAD and returns). Under umad2sim (whose umad_send is a
// write to ibsim's socket, blocking while it is full) send() only copies the MAD into a bounded
// queue that a sender thread per port drains with umad_send, in order: the writes run on the other
// core beside the main thread's work (issue #32: SUBNET UP on ft3-large 3,037 -> 1,778 ms, at 5k
// nodes 0-9 % less, scripts/bench/README.md), one wake-up per burst (setDeferWake/flush).
// Under umad2sim the queue is also paced (setPace): at most that many requests on the wire, each
// slot freed by its answer, and the receiver thread sends the next queued MAD itself when it
// frees a slot the sender waits for. Responses take no slot and never wait for one.
// A full queue drops the MAD (counted, send() returns false), as a lost MAD; send errors are
// counted (sendStats()). At close the queued responses are still written and the queued
// requests dropped; a sender stuck in umad_send is left behind with its own state (and the port
// left open) rather than blocking the main thread.
//
// This file parses no MAD (pacing reads a MAD's method and TID) and keeps no process-wide state:
// everything lives in the per-port object or the per-environment instance data. Every failure is thrown as an Error carrying
// `errno` and `call` (the libibumad function that failed).
#include <napi.h>

#include <arpa/inet.h>
#include <endian.h>
#include <infiniband/umad.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "issm.h"
#include "umad2sim-exit.h"

namespace {

// Per-MAD words in a batch's metadata array.
enum RecordField : uint32_t {
  R_OFFSET,  // byte offset of the MAD in the batch buffer
  R_LENGTH,
  R_STATUS,  // 0, or an errno for a sent MAD handed back undelivered
  R_AGENT,
  R_LID,
  R_QPN,
  R_QKEY,
  R_SL,
  R_PATH_BITS,
  R_PKEY_INDEX,
  R_GRH,  // 1 when the GRH fields below are present
  R_GID_INDEX,
  R_HOP_LIMIT,
  R_TRAFFIC_CLASS,
  R_FLOW_LABEL,
  R_GID0,  // GID as four big-endian 32-bit words
  R_GID1,
  R_GID2,
  R_GID3,
  R_STRIDE
};

// One MAD's record in sendMany's metadata array (indices exported as SEND_RECORD).
enum SendField : uint32_t {
  S_AGENT,
  S_OFFSET,  // byte offset of the MAD in the data array
  S_LENGTH,
  S_LID,
  S_QPN,
  S_QKEY,
  S_SL,
  S_PKEY_INDEX,
  S_TIMEOUT_MS,  // > 0: a request (the kernel's response timeout); 0: a response
  S_STRIDE
};

constexpr int kRecvTimeoutMs = 50;      // the receiver's wait when a stop request wakes it at once
// umad2sim (ibsim's LD_PRELOAD library, umad fds from 1024 up) waits on its own queue for a poll
// that names a umad fd and ignores the other fds: there the wake-up fd cannot end the wait, so
// the wait is this short and a stop waits at most this long...
constexpr int kRecvTimeoutSimMs = 1;
// ...while MADs come; once none came for kSimIdlePolls waits, the wait grows to this (or to
// kRecvTimeoutSimSelfWakeMs, below). Each wait that times out is a wake-up of this thread (~80 µs
// of CPU on this 2-core machine when loaded): 1 ms waits cost an idle SM 1.3 s of CPU a minute,
// 20 ms ones 240-390 ms, 50 ms ones 107-120 ms, the self-wake's 1 s ~20 ms (small fabric, no MADs;
// issue #32). A stop of an idle port under ibsim without an SMI agent waits up to this long (on
// hardware the wake-up fd ends the wait at once).
constexpr int kRecvTimeoutSimIdleMs = 50;
constexpr int kSimIdlePolls = 30;
// Where the port has an SMI agent (class 0x81: an SM), a stop wakes an idle receiver by a MAD of
// its own: a directed-route SubnGet(NodeInfo) of hop count 0, which ibsim answers from this port's
// node (RequestStop, SendSelfWake). The idle wait is then this long (a wake-up a second, nearly
// none), and a stop waits for the answer at most kSelfWakeAnswerMs (ibsim gone: the wait's end).
constexpr int kRecvTimeoutSimSelfWakeMs = 1000;
constexpr int kSelfWakeAnswerMs = 200;
// The self-wake SMP's transaction ID: its low 32 bits are compared (the high ones are the agent's,
// as the kernel has them).
constexpr uint64_t kSelfWakeTid = 0x000000005e1f0a11ULL;
constexpr int kUmad2simFirstFd = 1024;
constexpr uint32_t kMaxPending = 4096;  // MADs waiting for JS before the receiver pauses
constexpr int kMaxMadLength = 1 << 20;  // largest (RMPP-reassembled) MAD accepted
constexpr size_t kDefaultMadLength = 256;
constexpr uint32_t kDefaultSendQueue = 4096;  // MADs waiting for the sender before send() drops
constexpr int kSenderStopWaitMs = 1000;       // how long close waits for a sender stuck in umad_send
constexpr int kPaceExpiryMs = 100;            // a paced request's slot without an answer is freed after this
constexpr size_t kDeferredWakeAt = 32;        // queued MADs that wake the sender before flush()
constexpr size_t kPoolRefill = 64;            // buffers the main thread takes back from the queue's spares

Napi::Error UmadError(Napi::Env env, const char* call, int err, const std::string& what) {
  std::string msg = std::string(call) + "(" + what + ") failed: " + std::strerror(err) + " (errno " +
                    std::to_string(err) + ")";
  Napi::Error e = Napi::Error::New(env, msg);
  e.Set("errno", Napi::Number::New(env, err));
  e.Set("call", Napi::String::New(env, call));
  return e;
}

// libibumad returns either -errno or -1 with errno set.
int ErrnoOf(int ret) {
  if (ret < -1) return -ret;
  return errno ? errno : EIO;
}

std::string PortName(const std::string& ca, int port) {
  return (ca.empty() ? std::string("<default CA>") : ca) + " port " + std::to_string(port);
}

uint32_t ArgU32(const Napi::CallbackInfo& info, size_t i, const char* name) {
  if (!info[i].IsNumber()) throw Napi::TypeError::New(info.Env(), std::string(name) + " must be a number");
  return info[i].As<Napi::Number>().Uint32Value();
}

class UmadPort;

// The send queue, shared by the port (main thread) and its sender thread: a sender stuck in
// umad_send at close keeps it alive after the port object is gone.
struct SendQueue {
  struct Item {
    std::vector<uint8_t> umad;  // umad header + MAD
    int agent;
    int len;
    int timeoutMs;
    int retries;
  };
  explicit SendQueue(int port, uint32_t maxQueued) : portid(port), max(maxQueued) {}
  const int portid;
  const uint32_t max;
  std::mutex mu;
  std::condition_variable work;  // an item or stop
  std::condition_variable done;  // the sender has finished
  std::deque<Item> q;          // requests (and any MAD with a timeout), in send order
  std::deque<Item> responses;  // responses, in send order: written before the requests (they take
                               // no pacing slot, and an answer held behind stalled requests is late)
  std::vector<std::vector<uint8_t>> spare;  // buffers for reuse
  bool stop = false;
  bool finished = false;
  int sending = 0;  // 1 while the sender (or the receiver, OnAnswer) is inside umad_send
  double sent = 0, dropped = 0, errors = 0;
  double direct = 0;  // of `sent` and `errors`: sent by send() itself, not by the sender thread
  int lastErrno = 0;

  // Under mu: a umad_send's outcome (r, its errno e) counted, its buffer kept for reuse.
  void Count(int r, int e, std::vector<uint8_t>&& buf) {
    if (r < 0) {
      errors++;
      lastErrno = e;
    } else {
      sent++;
    }
    Recycle(std::move(buf));
  }

  // Under mu: a MAD buffer kept for reuse (a bounded few).
  void Recycle(std::vector<uint8_t>&& buf) {
    if (spare.size() < 64) spare.push_back(std::move(buf));
  }

  size_t Queued() const { return q.size() + responses.size(); }
  bool Empty() const { return q.empty() && responses.empty(); }

  // Under mu (held by lk), something queued: the next MAD taken (the first response, else the
  // first request), its pacing slot booked, written with umad_send outside the lock and counted.
  // `sending` keeps one MAD in umad_send at a time, so each queue's order is its order on the wire.
  void SendFront(std::unique_lock<std::mutex>& lk, uint32_t holdMs = 0) {
    std::deque<Item>& from = responses.empty() ? q : responses;
    Item it = std::move(from.front());
    from.pop_front();
    Book(it);
    sending = 1;
    lk.unlock();
    if (holdMs) std::this_thread::sleep_for(std::chrono::milliseconds(holdMs));
    errno = 0;
    int r = umad_send(portid, it.agent, it.umad.data(), it.len, it.timeoutMs, it.retries);
    int e = r < 0 ? ErrnoOf(r) : 0;
    lk.lock();
    sending = 0;
    Count(r, e, std::move(it.umad));
    if (stop) work.notify_all();  // the sender's drain at stop waits for the receiver's send
  }

  // Under mu, something queued: the next MAD is a request with no free slot (a response never
  // waits for one).
  bool FrontWaitsForSlot() const {
    uint32_t tid;
    return responses.empty() && pace && flights.size() >= pace && RequestTid(q.front(), tid);
  }

  // Under mu (held by lk), at stop: the queued responses written, the queued requests dropped
  // (their answers would find the port closed). An answer queued just before a close, such as the
  // one to a handover's ACKNOWLEDGE as a master stops, still reaches its requester.
  void DrainAtStop(std::unique_lock<std::mutex>& lk) {
    work.wait(lk, [&] { return !sending; });
    dropped += static_cast<double>(q.size());
    for (Item& it : q) Recycle(std::move(it.umad));
    q.clear();
    while (!responses.empty()) SendFront(lk);
  }

  // Pacing (setPace, under umad2sim): at most `pace` requests on the wire at once, counted here
  // below JS's window, so JS may keep more requests outstanding than the socket may hold (the
  // rest wait in this queue). A request's slot is freed by its answer (the receiver thread,
  // OnAnswer, matching the TID's low 32 bits: the high ones are the agent's) or after
  // kPaceExpiryMs without one (a lost MAD must not shrink the window for good).
  struct Flight {
    uint32_t tid;
    std::chrono::steady_clock::time_point at;
  };
  uint32_t pace = 0;  // 0: not paced
  size_t madOffset = 0;  // umad header bytes before the MAD in an Item
  std::vector<Flight> flights;  // the paced requests on the wire, in send order
  bool creditWait = false;  // the sender waits for a slot
  bool idleWait = false;    // the sender waits for work (an empty queue; woken by flush())
  uint32_t holdAnswerSendMs = 0;  // tests only (holdAnswerSends): a send on an answer held this long
  double expired = 0;  // slots freed without an answer
  double byReceiver = 0;  // of `sent` and `errors`: sent by the receiver thread on an answer
  double unsent = 0;  // requests dropped from the queue by unsend()

  static uint32_t TidLow(const uint8_t* mad) {
    return (uint32_t(mad[12]) << 24) | (uint32_t(mad[13]) << 16) | (uint32_t(mad[14]) << 8) | mad[15];
  }

  // A queued request's TID (low 32 bits) in `tid`; false for a response (no timeout) or a MAD
  // too short to hold one.
  bool RequestTid(const Item& it, uint32_t& tid) const {
    if (it.timeoutMs <= 0 || it.umad.size() < madOffset + 16) return false;
    tid = TidLow(it.umad.data() + madOffset);
    return true;
  }

  // Under mu: the slot of a paced request taken as it goes out (responses and unpaced MADs take none).
  void Book(const Item& it) {
    uint32_t tid;
    if (pace && RequestTid(it, tid)) flights.push_back(Flight{tid, std::chrono::steady_clock::now()});
  }

  // Under mu: the queued request with this TID dropped (its try timed out in JS while it waited
  // behind a stalled peer: sent later it would only be stale, and the retry behind it would wait
  // longer still). True when one was; counted as `unsent`.
  bool Unsend(uint32_t tid) {
    for (auto i = q.begin(); i != q.end(); ++i) {
      uint32_t t;
      if (!RequestTid(*i, t) || t != tid) continue;
      Recycle(std::move(i->umad));
      q.erase(i);
      unsent++;
      return true;
    }
    return false;
  }

  // Under mu: slots older than kPaceExpiryMs freed.
  void Expire(std::chrono::steady_clock::time_point now) {
    size_t k = 0;
    while (k < flights.size() && now - flights[k].at >= std::chrono::milliseconds(kPaceExpiryMs)) k++;
    if (!k) return;
    flights.erase(flights.begin(), flights.begin() + static_cast<std::ptrdiff_t>(k));
    expired += static_cast<double>(k);
  }

  // Receiver thread: a response with this TID arrived. Its request's slot is freed and, when the
  // sender waits for one, the next queued MAD goes out from here: one socket write on this thread
  // instead of a wake-up of the sender per answer (ft3-large SUBNET UP 1,166 -> 1,047 ms against
  // that wake-up; with the pacing, 5k 0.44x -> 0.36x OpenSM's: scripts/bench/README.md).
  // The sender asleep in either of its waits (for a slot, or for work: a MAD queued since, its
  // wake-up deferred to flush()) acts on this free slot only when woken, so this thread sends.
  void OnAnswer(uint32_t tid) {
    std::unique_lock<std::mutex> lk(mu);
    size_t i = 0;
    while (i < flights.size() && flights[i].tid != tid) i++;
    if (i == flights.size()) return;  // not ours, or its slot already expired
    flights.erase(flights.begin() + static_cast<std::ptrdiff_t>(i));
    if ((!creditWait && !idleWait) || stop) return;
    if (sending || Empty()) {
      if (creditWait) work.notify_one();
      return;
    }
    SendFront(lk, holdAnswerSendMs);
    byReceiver++;
    if (!Empty() && !FrontWaitsForSlot()) work.notify_one();
  }

  static void Loop(std::shared_ptr<SendQueue> s) {
    pthread_setname_np(pthread_self(), "ibsm-umad-send");  // per-thread CPU (/proc/PID/task) tells it apart
    std::unique_lock<std::mutex> lk(s->mu);
    for (;;) {
      s->idleWait = true;
      s->work.wait(lk, [&] { return s->stop || !s->Empty(); });
      s->idleWait = false;
      if (s->stop) break;
      if (s->pace) {
        // No slot free for the request in front (or the receiver is sending): wait for an
        // answer, or for the oldest slot's expiry. Never untimed: a slot the receiver books while
        // this thread sleeps must expire too, if its answer is lost.
        s->Expire(std::chrono::steady_clock::now());
        if (s->sending || s->FrontWaitsForSlot()) {
          s->creditWait = true;
          s->work.wait_until(lk, (s->flights.empty() ? std::chrono::steady_clock::now() : s->flights.front().at) + std::chrono::milliseconds(kPaceExpiryMs));
          s->creditWait = false;
          continue;
        }
      }
      s->SendFront(lk);
    }
    s->DrainAtStop(lk);
    s->finished = true;
    s->done.notify_all();
  }
};

// The thread-safe function's context. It can outlive the port object at environment teardown
// (finalizers run in no guaranteed order), so the port clears `port` when it is destroyed.
struct Link {
  UmadPort* port;
};

// The CAs and ports libibumad lists, gathered by CollectCas off the main thread (prefetchCas) or
// on it (listCas): the umad_ca_t's as libibumad filled them, or the call that failed.
struct CaListing {
  std::vector<umad_ca_t> cas;
  int err = 0;
  const char* call = nullptr;
  std::string what;
  void Release() {
    for (umad_ca_t& ca : cas) umad_release_ca(&ca);
    cas.clear();
  }
};

void CollectCas(CaListing& out) {
  umad_init();
  char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
  errno = 0;
  int n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
  if (n < 0) {
    out.err = ErrnoOf(n);
    out.call = "umad_get_cas_names";
    return;
  }
  for (int i = 0; i < n; i++) {
    umad_ca_t ca;
    errno = 0;
    int r = umad_get_ca(names[i], &ca);
    if (r < 0) {
      out.Release();
      out.err = ErrnoOf(r);
      out.call = "umad_get_ca";
      out.what = names[i];
      return;
    }
    out.cas.push_back(ca);
  }
}

// Under umad2sim (ibsim's preload, named in LD_PRELOAD) with no ibsim listening, umad2sim's first
// call waits for ever: whether ibsim's control socket @<IBSIM_SOCKNAME, else "sim">:ctl is bound
// (/proc/net/unix). transport/umad.ts's assertSimulatorListening makes the same test (and says
// why) before the main thread's first call; this one keeps the listing thread from starting one.
// `sock` is empty when no test is needed (no umad2sim, or ibsim over TCP: IBSIM_SERVER_NAME).
std::string SimulatorSocket() {
  const char* pre = getenv("LD_PRELOAD");
  if (pre == nullptr || std::strstr(pre, "umad2sim") == nullptr || getenv("IBSIM_SERVER_NAME") != nullptr) return "";
  const char* sock = getenv("IBSIM_SOCKNAME");
  return std::string("@") + (sock != nullptr && *sock ? sock : "sim") + ":ctl";
}

bool SimulatorListening(const std::string& want) {
  if (want.empty()) return true;
  FILE* f = std::fopen("/proc/net/unix", "re");
  if (f == nullptr) return false;
  char line[1024];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, f) != nullptr) {
    const char* p = std::strstr(line, want.c_str());
    if (p == nullptr) continue;
    p += want.size();
    while (*p == '@') p++;  // the name's NUL padding shows as @
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    found = *p == '\0';
  }
  std::fclose(f);
  return found;
}

// Under umad2sim a closed port's umad fd is kept open ("parked") until process exit: umad2sim
// hands a MAD that arrives for a class nobody holds to a NULL queue (its receiver thread then dies
// of SIGSEGV, and the process with it), and a stop cannot keep MADs from arriving (an SMP's answer
// still on its way, a trap, an SA request). A parked port's MADs wait in umad2sim's queue unread.
// At exit Umad2simExit detaches from ibsim first and then closes them. umad2sim has 8 fds a device:
// past kMaxParked the oldest is closed after all.
constexpr size_t kMaxParked = 6;

struct Instance {
  std::set<UmadPort*> open;
  std::vector<int> parked;  // umad port ids closed by us, left open under umad2sim
  void Park(int portid) {
    parked.push_back(portid);
    if (parked.size() > kMaxParked) {
      umad_close_port(parked.front());
      parked.erase(parked.begin());
    }
  }
  void CloseParked() {
    for (int id : parked) umad_close_port(id);
    parked.clear();
  }
  Napi::FunctionReference portCtor;
  bool tearingDown = false;
  // prefetchCas(): the listing gathered on its own thread while the main thread compiles and
  // evaluates the bundle (under ibsim, umad2sim's first call writes its whole sysfs tree, ~10 ms);
  // the next listCas() takes it (once), joining the thread first.
  std::thread prefetch;
  CaListing prefetched;
  bool havePrefetched = false;  // the thread has been joined
  bool prefetchedAny = false;   // and it listed (not under umad2sim with no ibsim listening)
  void JoinPrefetch() {
    if (prefetch.joinable()) {
      prefetch.join();
      havePrefetched = true;
    }
  }
};

Napi::Object PortToJs(Napi::Env env, const umad_port_t* p) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("caName", std::string(p->ca_name));
  o.Set("portNum", p->portnum);
  o.Set("linkLayer", std::string(p->link_layer));
  o.Set("state", p->state);
  o.Set("physState", p->phys_state);
  o.Set("lid", p->base_lid);
  o.Set("lmc", p->lmc);
  o.Set("smLid", p->sm_lid);
  o.Set("smSl", p->sm_sl);
  o.Set("rate", p->rate);
  o.Set("capMask", static_cast<uint32_t>(ntohl(p->capmask)));
  o.Set("gidPrefix", Napi::BigInt::New(env, static_cast<uint64_t>(be64toh(p->gid_prefix))));
  o.Set("portGuid", Napi::BigInt::New(env, static_cast<uint64_t>(be64toh(p->port_guid))));
  return o;
}

Napi::Value ListCas(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Instance* inst = env.GetInstanceData<Instance>();
  CaListing l;
  inst->JoinPrefetch();
  if (inst->havePrefetched && inst->prefetchedAny) {
    std::swap(l, inst->prefetched);
    inst->havePrefetched = inst->prefetchedAny = false;
  } else {
    inst->havePrefetched = inst->prefetchedAny = false;
    CollectCas(l);
  }
  if (l.err) throw UmadError(env, l.call, l.err, l.what);
  Napi::Array out = Napi::Array::New(env);
  try {
    for (size_t i = 0; i < l.cas.size(); i++) {
      const umad_ca_t& ca = l.cas[i];
      Napi::Object o = Napi::Object::New(env);
      o.Set("name", std::string(ca.ca_name));
      o.Set("nodeType", ca.node_type);
      o.Set("numPorts", ca.numports);
      o.Set("fwVer", std::string(ca.fw_ver));
      o.Set("caType", std::string(ca.ca_type));
      o.Set("hwVer", std::string(ca.hw_ver));
      o.Set("nodeGuid", Napi::BigInt::New(env, static_cast<uint64_t>(be64toh(ca.node_guid))));
      o.Set("systemGuid", Napi::BigInt::New(env, static_cast<uint64_t>(be64toh(ca.system_guid))));
      Napi::Array ports = Napi::Array::New(env);
      uint32_t k = 0;
      for (int p = 0; p < UMAD_CA_MAX_PORTS; p++)
        if (ca.ports[p]) ports.Set(k++, PortToJs(env, ca.ports[p]));
      o.Set("ports", ports);
      out.Set(static_cast<uint32_t>(i), o);
    }
  } catch (...) {
    l.Release();
    throw;
  }
  l.Release();
  return out;
}

// prefetchCas(): start gathering listCas()'s answer on a thread of its own (once; not once a port
// is open). endPrefetch(): wait for that thread (for process exit: libibumad, and umad2sim under
// ibsim, must not be left half way through their first call).
Napi::Value PrefetchCas(const Napi::CallbackInfo& info) {
  Instance* inst = info.Env().GetInstanceData<Instance>();
  if (inst->prefetch.joinable() || inst->havePrefetched || !inst->open.empty()) return Napi::Boolean::New(info.Env(), false);
  try {
    // The environment read here, on the main thread (JS may change it meanwhile).
    inst->prefetch = std::thread([inst, sock = SimulatorSocket()]() {
      if (SimulatorListening(sock)) {
        CollectCas(inst->prefetched);
        inst->prefetchedAny = true;
      }
    });
  } catch (const std::system_error&) {
    return Napi::Boolean::New(info.Env(), false);  // no thread: listCas() lists on the main thread
  }
  return Napi::Boolean::New(info.Env(), true);
}

Napi::Value EndPrefetch(const Napi::CallbackInfo& info) {
  info.Env().GetInstanceData<Instance>()->JoinPrefetch();
  return info.Env().Undefined();
}

// The SMI/GSI device pair serving a CA port on libraries that split them; null otherwise.
Napi::Value SmiGsiPair(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
#if IBSM_HAVE_SMI_GSI_PAIRS
  std::string ca = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  uint32_t port = ArgU32(info, 1, "port");
  umad_init();
  struct umad_ca_pair pair;
  std::memset(&pair, 0, sizeof pair);
  if (umad_get_smi_gsi_pair_by_ca_name(ca.c_str(), static_cast<uint8_t>(port), &pair, 0) != 0) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("smiName", std::string(pair.smi_name));
  o.Set("smiPort", pair.smi_preferred_port);
  o.Set("gsiName", std::string(pair.gsi_name));
  o.Set("gsiPort", pair.gsi_preferred_port);
  return o;
#else
  return env.Null();
#endif
}

class UmadPort : public Napi::ObjectWrap<UmadPort> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "UmadPort",
                       {
                           InstanceMethod<&UmadPort::Register>("register"),
                           InstanceMethod<&UmadPort::Unregister>("unregister"),
                           InstanceMethod<&UmadPort::Send>("send"),
                           InstanceMethod<&UmadPort::SendMany>("sendMany"),
                           InstanceMethod<&UmadPort::SendStats>("sendStats"),
                           InstanceMethod<&UmadPort::Flush>("flush"),
                           InstanceMethod<&UmadPort::SetPace>("setPace"),
                           InstanceMethod<&UmadPort::HoldAnswerSends>("holdAnswerSends"),
                           InstanceMethod<&UmadPort::Unsend>("unsend"),
                           InstanceMethod<&UmadPort::SetDeferWake>("setDeferWake"),
                           InstanceMethod<&UmadPort::OpenIssm>("openIssm"),
                           InstanceMethod<&UmadPort::CloseIssm>("closeIssm"),
                           InstanceMethod<&UmadPort::Close>("close"),
                           InstanceMethod<&UmadPort::CloseSync>("closeSync"),
                           InstanceAccessor<&UmadPort::IsOpen>("isOpen"),
                       });
  }

  // new UmadPort(caName: string | null, portNum: number, onBatch: Function, smi: boolean, sendQueue?: number)
  explicit UmadPort(const Napi::CallbackInfo& info) : Napi::ObjectWrap<UmadPort>(info) {
    Napi::Env env = info.Env();
    inst_ = env.GetInstanceData<Instance>();
    caName_ = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
    portNum_ = static_cast<int>(ArgU32(info, 1, "portNum"));
    if (!info[2].IsFunction()) throw Napi::TypeError::New(env, "onBatch must be a function");
    bool smi = info[3].ToBoolean();
    uint32_t sendQueue = info[4].IsNumber() ? info[4].As<Napi::Number>().Uint32Value() : kDefaultSendQueue;
    if (sendQueue == 0) throw Napi::RangeError::New(env, "sendQueue must be at least 1");
    const char* ca = caName_.empty() ? nullptr : caName_.c_str();
    umad_init();
    errno = 0;
    const char* call = "umad_open_port";
    int id;
#if IBSM_HAVE_OPEN_SMI_PORT
    if (smi) {
      call = "umad_open_smi_port";
      id = umad_open_smi_port(ca, portNum_);
    } else
#endif
      id = umad_open_port(ca, portNum_);
    (void)smi;
    if (id < 0) throw UmadError(env, call, ErrnoOf(id), PortName(caName_, portNum_));
    portid_ = id;
    umadSize_ = umad_size();  // only meaningful after the first open
    link_ = new Link{this};
    try {
      tsfn_ = Tsfn::New(env, info[2].As<Napi::Function>(), "ibsm-umad-recv", 0, 1, link_, OnTsfnFinalize,
                        static_cast<void*>(nullptr));
    } catch (...) {
      delete link_;
      link_ = nullptr;
      umad_close_port(portid_);
      portid_ = -1;
      throw;
    }
    tsfnLive_ = true;
    wakeFd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);  // -1: the receiver falls back to short waits
    Ref();  // an open port stays alive until its receiver has finished
    inst_->open.insert(this);
    // Direct sends (see the top of this file): a kernel's umad write never waits for room;
    // umad2sim's is a socket write, left to the sender thread.
    direct_ = umad_get_fd(portid_) < kUmad2simFirstFd;
    sendq_ = std::make_shared<SendQueue>(portid_, sendQueue);
    sendq_->madOffset = umadSize_;
    sender_ = std::thread(&SendQueue::Loop, sendq_);
    thread_ = std::thread(&UmadPort::ReceiveLoop, this);
  }

  ~UmadPort() override {
    Shutdown();
    if (link_) link_->port = nullptr;
  }

  // Stop the receiver and the sender and close everything, synchronously (the receiver is woken,
  // and kSenderStopWaitMs for a sender stuck in umad_send: then it is left behind with
  // the port open, since closing a port under a running umad_send is not safe).
  // The sender first: nothing goes out once the receiver has stopped.
  void Shutdown() {
    bool senderDone = StopSender();
    StopAndJoin();
    ClosePort(senderDone);
  }

  // Process exit under umad2sim, in stages across every open port (Umad2simExit): first the threads
  // (the receiver by its self-wake while ibsim still answers; the sender with what it has queued
  // dropped), then ibsim is left (native/umad2sim-exit.c: nothing arrives any more), then the ports
  // closed: an arrival after a close would find umad2sim's queue gone.
  bool StopThreads() {
    bool senderDone = StopSender();
    StopAndJoin();
    return senderDone;
  }
  void CloseAfterStop(bool closeUmad) { ClosePort(closeUmad); }

  // True when no sender runs any more (stopped and joined, or never started).
  bool StopSender() {
    if (!sender_.joinable()) return !senderLeft_;
    bool finished;
    {
      std::unique_lock<std::mutex> lk(sendq_->mu);
      sendq_->stop = true;
      sendq_->work.notify_all();
      finished = sendq_->done.wait_for(lk, std::chrono::milliseconds(kSenderStopWaitMs), [&] { return sendq_->finished; });
    }
    if (finished) {
      sender_.join();
      return true;
    }
    sender_.detach();
    senderLeft_ = true;
    return false;
  }

 private:
  void CheckOpen(Napi::Env env, const char* call) {
    if (portid_ < 0) throw UmadError(env, call, EBADF, "port " + PortName(caName_, portNum_) + " is closed");
  }

  // register(mgmtClass, classVersion, rmppVersion, methods?: number[], oui?: number): agentId
  Napi::Value Register(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    uint32_t mgmtClass = ArgU32(info, 0, "mgmtClass");
    uint32_t classVersion = ArgU32(info, 1, "classVersion");
    uint32_t rmpp = ArgU32(info, 2, "rmppVersion");
    const bool hasOui = info[4].IsNumber();
    const char* call = hasOui ? "umad_register_oui" : "umad_register";
    CheckOpen(env, call);
    long mask[16 / sizeof(long)] = {0};
    constexpr unsigned kBitsPerLong = 8 * sizeof(long);
    if (info[3].IsArray()) {
      Napi::Array methods = info[3].As<Napi::Array>();
      for (uint32_t i = 0; i < methods.Length(); i++) {
        Napi::Value v = methods.Get(i);
        if (!v.IsNumber()) throw Napi::TypeError::New(env, "methods must be numbers");
        uint32_t m = v.As<Napi::Number>().Uint32Value();
        if (m > 127) throw Napi::RangeError::New(env, "method " + std::to_string(m) + " is out of range 0-127");
        mask[m / kBitsPerLong] |= 1L << (m % kBitsPerLong);
      }
    }
    char what[64];
    errno = 0;
    int id;
    if (hasOui) {
      uint32_t oui = info[4].As<Napi::Number>().Uint32Value();
      uint8_t o[3] = {static_cast<uint8_t>(oui >> 16), static_cast<uint8_t>(oui >> 8), static_cast<uint8_t>(oui)};
      std::snprintf(what, sizeof what, "class 0x%02x oui 0x%06x", mgmtClass, oui & 0xffffff);
      id = umad_register_oui(portid_, static_cast<int>(mgmtClass), static_cast<uint8_t>(rmpp), o, mask);
    } else {
      std::snprintf(what, sizeof what, "class 0x%02x version %u", mgmtClass, classVersion);
      id = umad_register(portid_, static_cast<int>(mgmtClass), static_cast<int>(classVersion),
                         static_cast<uint8_t>(rmpp), mask);
    }
    if (id < 0) throw UmadError(env, call, ErrnoOf(id), what);
    if (mgmtClass == 0x81 && !hasOui) {
      std::lock_guard<std::mutex> lk(mu_);
      smiAgent_ = id;
    }
    return Napi::Number::New(env, id);
  }

  Napi::Value Unregister(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    uint32_t agent = ArgU32(info, 0, "agentId");
    CheckOpen(env, "umad_unregister");
    errno = 0;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (smiAgent_ == static_cast<int>(agent)) smiAgent_ = -1;
    }
    int r = umad_unregister(portid_, static_cast<int>(agent));
    if (r < 0) throw UmadError(env, "umad_unregister", ErrnoOf(r), "agent " + std::to_string(agent));
    return env.Undefined();
  }

  // send(agentId, data, lid, qpn, qkey, sl, pkeyIndex, timeoutMs, retries,
  //      grh?: {dgid: Uint8Array(16), sgidIndex, hopLimit, trafficClass, flowLabel}): boolean
  // Queues the MAD for the sender thread; false when the queue was full (the MAD is dropped).
  Napi::Value Send(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    uint32_t agent = ArgU32(info, 0, "agentId");
    if (!info[1].IsTypedArray()) throw Napi::TypeError::New(env, "data must be a Uint8Array");
    Napi::Uint8Array data = info[1].As<Napi::Uint8Array>();
    uint32_t lid = ArgU32(info, 2, "lid"), qpn = ArgU32(info, 3, "qpn"), qkey = ArgU32(info, 4, "qkey");
    uint32_t sl = ArgU32(info, 5, "sl"), pkeyIndex = ArgU32(info, 6, "pkeyIndex");
    uint32_t timeoutMs = ArgU32(info, 7, "timeoutMs"), retries = ArgU32(info, 8, "retries");
    CheckOpen(env, "umad_send");
    size_t n = data.ByteLength();
    if (n == 0 || n > static_cast<size_t>(kMaxMadLength))
      throw Napi::RangeError::New(env, "MAD length " + std::to_string(n) + " is out of range");
    std::vector<uint8_t> buf = BuildUmad(data.Data(), n, lid, qpn, qkey, sl, pkeyIndex);
    void* umad = buf.data();
    if (info[9].IsObject()) {
      Napi::Object g = info[9].As<Napi::Object>();
      Napi::Value dgid = g.Get("dgid");
      if (!dgid.IsTypedArray() || dgid.As<Napi::Uint8Array>().ByteLength() != 16)
        throw Napi::TypeError::New(env, "grh.dgid must be a 16-byte Uint8Array");
      ib_mad_addr_t a;
      std::memset(&a, 0, sizeof a);
      std::memcpy(a.gid, dgid.As<Napi::Uint8Array>().Data(), 16);
      a.hop_limit = static_cast<uint8_t>(g.Get("hopLimit").As<Napi::Number>().Uint32Value());
      a.traffic_class = static_cast<uint8_t>(g.Get("trafficClass").As<Napi::Number>().Uint32Value());
      a.flow_label = g.Get("flowLabel").As<Napi::Number>().Uint32Value();
      umad_set_grh(umad, &a);  // host-order fields; does not set the source GID index
      umad_get_mad_addr(umad)->gid_index = static_cast<uint8_t>(g.Get("sgidIndex").As<Napi::Number>().Uint32Value());
    }
    if (TrySendDirect(buf, agent, n, timeoutMs, retries)) return Napi::Boolean::New(env, true);
    bool queued;
    size_t waiting;
    {
      std::lock_guard<std::mutex> lk(sendq_->mu);
      queued = EnqueueLocked(SendQueue::Item{std::move(buf), static_cast<int>(agent), static_cast<int>(n), static_cast<int>(timeoutMs), static_cast<int>(retries)});
      waiting = sendq_->Queued();
    }
    // Deferred, the wake-up waits for flush() unless a long burst has queued kDeferredWakeAt MADs:
    // then the sender starts on them while the burst goes on.
    if (wakeOwed_ && (!deferWake_ || waiting >= kDeferredWakeAt)) FlushWake();
    return Napi::Boolean::New(env, queued);
  }

  // A MAD of n bytes in a umad buffer (from the main thread's pool) addressed to lid/qpn.
  std::vector<uint8_t> BuildUmad(const uint8_t* mad, size_t n, uint32_t lid, uint32_t qpn, uint32_t qkey, uint32_t sl, uint32_t pkeyIndex) {
    std::vector<uint8_t> buf;
    if (!pool_.empty()) {
      buf = std::move(pool_.back());
      pool_.pop_back();
    }
    buf.assign(umadSize_ + n, 0);
    void* umad = buf.data();
    std::memcpy(umad_get_mad(umad), mad, n);
    umad_set_addr(umad, static_cast<int>(lid), static_cast<int>(qpn), static_cast<int>(sl), static_cast<int>(qkey));
    umad_set_pkey(umad, static_cast<int>(pkeyIndex));
    return buf;
  }

  // Under sendq_->mu, on the main thread: buffers the sender is done with, back in the pool.
  void RefillPoolLocked() {
    while (pool_.size() < kPoolRefill && !sendq_->spare.empty()) {
      pool_.push_back(std::move(sendq_->spare.back()));
      sendq_->spare.pop_back();
    }
  }

  // Under sendq_->mu, on the main thread: `it` queued for the sender, or dropped (counted, false)
  // when the queue is at its bound; buffers taken back for the pool while the lock is held anyway.
  bool EnqueueLocked(SendQueue::Item&& it) {
    RefillPoolLocked();
    if (sendq_->Queued() >= sendq_->max) {
      sendq_->dropped++;
      sendq_->Recycle(std::move(it.umad));
      return false;
    }
    // The sender asleep waiting for work is owed a wake-up (not `sending`: the receiver sends
    // too, OnAnswer, and a MAD queued while it did waited until the queue ran empty, 15 s at
    // 5k nodes: docs/ibsim-notes.md). Waiting for a slot, it is woken for a response (which
    // needs none).
    if (sendq_->idleWait || (it.timeoutMs == 0 && sendq_->creditWait)) wakeOwed_ = true;
    (it.timeoutMs > 0 ? sendq_->q : sendq_->responses).push_back(std::move(it));
    return true;
  }

  // sendMany(data, meta, count): `count` MADs (no GRH, each at most kDefaultMadLength bytes) as
  // send() would take them one by one, with one lock of the queue for all of them instead of two
  // for each (at 5k nodes under ibsim the main thread's send() was ~12 % of the discovery, much of
  // it waiting for that lock while the receiver held it). meta: SEND_RECORD.stride words a MAD.
  // The sender is woken at the end if it is owed a wake-up. Returns how many a full queue dropped.
  Napi::Value SendMany(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
      throw Napi::TypeError::New(env, "data must be a Uint8Array");
    if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
      throw Napi::TypeError::New(env, "meta must be a Uint32Array");
    Napi::Uint8Array data = info[0].As<Napi::Uint8Array>();
    Napi::Uint32Array meta = info[1].As<Napi::Uint32Array>();
    uint32_t count = ArgU32(info, 2, "count");
    CheckOpen(env, "umad_send");
    if (static_cast<size_t>(count) * S_STRIDE > meta.ElementLength())
      throw Napi::RangeError::New(env, "meta holds fewer than " + std::to_string(count) + " records");
    const uint8_t* bytes = data.Data();
    const size_t dataLen = data.ByteLength();
    const uint32_t* m = meta.Data();
    // Checked before anything is sent: a bad record is a bug of the caller, not a lost MAD.
    for (uint32_t i = 0; i < count; i++) {
      const uint32_t* r = m + static_cast<size_t>(i) * S_STRIDE;
      size_t off = r[S_OFFSET], n = r[S_LENGTH];
      if (n == 0 || n > kDefaultMadLength || off + n > dataLen)
        throw Napi::RangeError::New(env, "MAD " + std::to_string(i) + " (offset " + std::to_string(off) + ", length " + std::to_string(n) + ") is out of range");
    }
    const bool direct = direct_ && !paced_.load(std::memory_order_relaxed);
    staged_.clear();
    for (uint32_t i = 0; i < count; i++) {
      const uint32_t* r = m + static_cast<size_t>(i) * S_STRIDE;
      size_t n = r[S_LENGTH];
      std::vector<uint8_t> buf = BuildUmad(bytes + r[S_OFFSET], n, r[S_LID], r[S_QPN], r[S_QKEY], r[S_SL], r[S_PKEY_INDEX]);
      // The order of sends is kept: once one MAD goes to the queue, the rest follow it there.
      if (direct && staged_.empty() && TrySendDirect(buf, r[S_AGENT], n, r[S_TIMEOUT_MS], 0)) continue;
      staged_.push_back(SendQueue::Item{std::move(buf), static_cast<int>(r[S_AGENT]), static_cast<int>(n), static_cast<int>(r[S_TIMEOUT_MS]), 0});
    }
    uint32_t dropped = 0;
    if (!staged_.empty()) {
      std::lock_guard<std::mutex> lk(sendq_->mu);
      for (SendQueue::Item& it : staged_)
        if (!EnqueueLocked(std::move(it))) dropped++;
    }
    staged_.clear();
    FlushWake();
    return Napi::Number::New(env, dropped);
  }

  // umad_send on this thread on a kernel's device when nothing waits in the queue (the order of
  // sends is kept); false when the MAD must go through the queue.
  bool TrySendDirect(std::vector<uint8_t>& buf, uint32_t agent, size_t n, uint32_t timeoutMs, uint32_t retries) {
    if (!direct_ || paced_.load(std::memory_order_relaxed)) return false;
    {
      std::lock_guard<std::mutex> lk(sendq_->mu);
      // Only this thread adds to the queue: empty and idle now, it stays so during the send.
      if (!sendq_->Empty() || sendq_->sending) return false;
    }
    errno = 0;
    int r = umad_send(portid_, static_cast<int>(agent), buf.data(), static_cast<int>(n), static_cast<int>(timeoutMs), static_cast<int>(retries));
    int e = r < 0 ? ErrnoOf(r) : 0;
    std::lock_guard<std::mutex> lk(sendq_->mu);
    sendq_->direct++;
    sendq_->Count(r, e, std::move(buf));
    RefillPoolLocked();
    return true;
  }

  // setDeferWake(on): with it on, send() leaves the sender thread asleep and flush() wakes it once
  // for all the MADs queued since (one wake-up per burst of sends instead of one per MAD).
  Napi::Value SetDeferWake(const Napi::CallbackInfo& info) {
    deferWake_ = info[0].ToBoolean();
    if (!deferWake_) FlushWake();
    return info.Env().Undefined();
  }

  // setPace(n): at most n requests of this port on the wire at once (0: no bound here); see
  // SendQueue's pacing. Under umad2sim, where the wire is a socket pair that hangs both processes
  // when full.
  Napi::Value SetPace(const Napi::CallbackInfo& info) {
    uint32_t n = ArgU32(info, 0, "pace");
    {
      std::lock_guard<std::mutex> lk(sendq_->mu);
      sendq_->pace = n;
      if (!n) sendq_->flights.clear();
      sendq_->work.notify_one();
    }
    paced_.store(n > 0);
    return info.Env().Undefined();
  }

  // holdAnswerSends(ms), for tests only: each MAD the receiver thread sends on an answer
  // (OnAnswer) waits `ms` between leaving the queue and umad_send, so a test can queue a MAD while
  // the receiver is sending (test/bounds-umad.test.ts, the lost wake-up). 0: off.
  Napi::Value HoldAnswerSends(const Napi::CallbackInfo& info) {
    uint32_t ms = ArgU32(info, 0, "ms");
    std::lock_guard<std::mutex> lk(sendq_->mu);
    sendq_->holdAnswerSendMs = ms;
    return info.Env().Undefined();
  }

  // unsend(tidLow): drop the queued request with this TID (SendQueue::Unsend).
  Napi::Value Unsend(const Napi::CallbackInfo& info) {
    uint32_t tid = ArgU32(info, 0, "tid");
    std::lock_guard<std::mutex> lk(sendq_->mu);
    return Napi::Boolean::New(info.Env(), sendq_->Unsend(tid));
  }

  // flush(): wake the sender thread for what send() queued while wake-ups were deferred.
  Napi::Value Flush(const Napi::CallbackInfo& info) {
    FlushWake();
    return info.Env().Undefined();
  }

  void FlushWake() {
    if (!wakeOwed_ || !sendq_) return;
    wakeOwed_ = false;
    sendq_->work.notify_one();
  }

  // sendStats(): { queued, sending, sent, dropped, errors, lastErrno, direct } since the port was opened.
  Napi::Value SendStats(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Object o = Napi::Object::New(env);
    std::lock_guard<std::mutex> lk(sendq_->mu);
    o.Set("queued", static_cast<double>(sendq_->Queued()));
    o.Set("sending", sendq_->sending);
    o.Set("sent", sendq_->sent);
    o.Set("dropped", sendq_->dropped);
    o.Set("errors", sendq_->errors);
    o.Set("lastErrno", sendq_->lastErrno);
    o.Set("direct", sendq_->direct);
    o.Set("inFlight", static_cast<double>(sendq_->flights.size()));
    o.Set("expired", sendq_->expired);
    o.Set("byReceiver", sendq_->byReceiver);
    o.Set("unsent", sendq_->unsent);
    return o;
  }

  Napi::Value OpenIssm(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    CheckOpen(env, "umad_get_issm_path");
    if (issmFd_ >= 0) return env.Undefined();
    char path[256];
    errno = 0;
    int r = umad_get_issm_path(caName_.empty() ? nullptr : caName_.c_str(), portNum_, path, sizeof path);
    if (r < 0) throw UmadError(env, "umad_get_issm_path", ErrnoOf(r), PortName(caName_, portNum_));
    int fd = ibsm_issm_open(path);
    if (fd < 0) throw UmadError(env, "open", -fd, path);
    issmFd_ = fd;
    return env.Undefined();
  }

  Napi::Value CloseIssm(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (issmFd_ >= 0) {
      int fd = issmFd_;
      issmFd_ = -1;
      int r = ibsm_issm_close(fd);
      if (r < 0) throw UmadError(env, "close", -r, "issm");
    }
    return env.Undefined();
  }

  Napi::Value IsOpen(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), portid_ >= 0); }

  // close(): Promise<void>. The wake-up eventfd ends the receiver's wait at once (under umad2sim
  // within kRecvTimeoutSimMs), the thread-safe function drains, and its finalizer closes the port on the main thread.
  Napi::Value Close(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Promise::Deferred d = Napi::Promise::Deferred::New(env);
    Napi::Promise p = d.Promise();
    if (!tsfnLive_) {
      Shutdown();
      d.Resolve(env.Undefined());
    } else {
      closeWaiters_.push_back(std::move(d));
      StopSender();  // before the receiver's stop (see Shutdown)
      RequestStop();
    }
    return p;
  }

  // closeSync(): for process exit; blocks until the receiver has left its wait (see close()).
  Napi::Value CloseSync(const Napi::CallbackInfo& info) {
    Shutdown();
    return info.Env().Undefined();
  }

  void RequestStop() {
    int wakeAgent = -1;
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_.store(true);
      // A receiver in its long wait under umad2sim (which cannot see the wake-up fd) is woken by
      // the answer to a MAD of its own; it then waits for that answer before it leaves, so that
      // no answer comes after the agent is gone (umad2sim dereferences a NULL queue then).
      if (idleWait_ && !selfWake_ && smiAgent_ >= 0 && portid_ >= 0) {
        selfWake_ = true;
        wakeAgent = smiAgent_;
      }
    }
    if (wakeAgent >= 0) SendSelfWake(wakeAgent);
    drained_.notify_all();
    if (wakeFd_ >= 0) {
      uint64_t one = 1;
      ssize_t w = write(wakeFd_, &one, sizeof one);  // ends the receiver's poll
      (void)w;
    }
  }

  void StopAndJoin() {
    RequestStop();
    if (thread_.joinable()) thread_.join();
  }

  // The self-wake SMP: SubnGet(NodeInfo), directed route, hop count 0 (this port's own node),
  // permissive DR SLID/DLID. A failed send leaves the receiver to its wait's end.
  void SendSelfWake(int agent) {
    std::vector<uint8_t> buf(umadSize_ + kDefaultMadLength, 0);
    uint8_t* m = static_cast<uint8_t*>(umad_get_mad(buf.data()));
    m[0] = 1;     // base version
    m[1] = 0x81;  // SubnDirected
    m[2] = 1;     // class version
    m[3] = 0x01;  // Get
    for (int i = 0; i < 8; i++) m[8 + i] = static_cast<uint8_t>(kSelfWakeTid >> (56 - 8 * i));
    m[16] = 0x00;
    m[17] = 0x11;  // NodeInfo
    m[32] = m[33] = m[34] = m[35] = 0xff;  // DrSLID, DrDLID: permissive
    umad_set_addr(buf.data(), 0xffff, 0, 0, 0);
    errno = 0;
    (void)umad_send(portid_, agent, buf.data(), static_cast<int>(kDefaultMadLength), 0, 0);
  }

  // After a stop with a self-wake sent: read until its answer is read (the MADs before it are
  // dropped: the port is closing), at most kSelfWakeAnswerMs.
  void AwaitSelfWake(std::vector<uint8_t>& buf, int umadFd) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kSelfWakeAnswerMs);
    while (std::chrono::steady_clock::now() < until) {
      struct pollfd fd{umadFd, POLLIN, 0};
      if (poll(&fd, 1, kRecvTimeoutSimMs) <= 0 || !(fd.revents & POLLIN)) continue;
      int len = static_cast<int>(buf.size() - umadSize_);
      if (umad_recv(portid_, buf.data(), &len, 0) < 0 || len < 16) continue;
      const uint8_t* m = static_cast<const uint8_t*>(umad_get_mad(buf.data()));
      uint64_t tid = 0;
      for (int i = 0; i < 8; i++) tid = (tid << 8) | m[8 + i];
      if (m[1] == 0x81 && (tid & 0xffffffffULL) == kSelfWakeTid) return;
    }
  }

  // Main thread only, after the receiver has stopped; `closeUmad` false leaves the umad port to a
  // sender still inside umad_send (the port counts as closed all the same).
  void ClosePort(bool closeUmad = true) {
    if (wakeFd_ >= 0 && !thread_.joinable()) {
      close(wakeFd_);
      wakeFd_ = -1;
    }
    if (issmFd_ >= 0) {
      ibsm_issm_close(issmFd_);
      issmFd_ = -1;
    }
    if (portid_ >= 0) {
      if (closeUmad) {
        if (!direct_ && inst_ && !inst_->tearingDown) inst_->Park(portid_);  // umad2sim: see kMaxParked
        else umad_close_port(portid_);
      }
      portid_ = -1;
      inst_->open.erase(this);  // only while open: at teardown the instance data may be gone later
    }
  }

  // The receiver waits in poll() on the umad fd and the wake-up eventfd, so a stop request
  // (RequestStop writes the eventfd) ends the wait at once; then umad_recv reads without waiting.
  void ReceiveLoop() {
    pthread_setname_np(pthread_self(), "ibsm-umad-recv");
    std::vector<uint8_t> buf(umadSize_ + kDefaultMadLength);
    int transientErrors = 0;
    const int umadFd = umad_get_fd(portid_);
    const bool sim = umadFd >= kUmad2simFirstFd;
    int emptyPolls = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      struct pollfd fds[2] = {{umadFd, POLLIN, 0}, {wakeFd_, POLLIN, 0}};
      int waitMs = !sim ? kRecvTimeoutMs : emptyPolls < kSimIdlePolls ? kRecvTimeoutSimMs : kRecvTimeoutSimIdleMs;
      if (sim && emptyPolls >= kSimIdlePolls) {
        // The long wait, where a stop can wake it (RequestStop reads idleWait_ under mu_).
        std::lock_guard<std::mutex> lk(mu_);
        if (stop_.load()) break;
        if (smiAgent_ >= 0) {
          idleWait_ = true;
          waitMs = kRecvTimeoutSimSelfWakeMs;
        }
      }
      int n = umadFd >= 0 ? poll(fds, wakeFd_ >= 0 ? 2 : 1, waitMs) : 1;
      if (idleWait_) {
        bool woken;
        {
          std::lock_guard<std::mutex> lk(mu_);
          idleWait_ = false;
          woken = selfWake_;
        }
        if (woken) {
          AwaitSelfWake(buf, umadFd);
          break;
        }
      }
      if (stop_.load(std::memory_order_relaxed)) break;
      if (n == 0) {
        if (emptyPolls < kSimIdlePolls) emptyPolls++;
        continue;
      }
      emptyPolls = 0;
      if (n < 0 || !(fds[0].revents & POLLIN)) {
        // EINTR, or umad2sim's -1 without errno: try again (backing off if it persists).
        if (n < 0 && ++transientErrors > 100) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      int len = static_cast<int>(buf.size() - umadSize_);
      int r = umad_recv(portid_, buf.data(), &len, umadFd >= 0 ? 0 : kRecvTimeoutMs);
      if (r >= 0) {
        transientErrors = 0;
        // A response (the method's R bit) frees its request's slot when sends are paced.
        const uint8_t* m = buf.data() + umadSize_;
        if (paced_.load(std::memory_order_relaxed) && len >= 16 && (m[3] & 0x80)) sendq_->OnAnswer(SendQueue::TidLow(m));
        if (!Deliver(buf.data(), len)) break;
        continue;
      }
      int e = -r;
      if (e == ETIMEDOUT) {
        transientErrors = 0;
        continue;
      }
      if (e == ENOSPC && len > static_cast<int>(buf.size() - umadSize_) && len <= kMaxMadLength) {
        buf.resize(umadSize_ + static_cast<size_t>(len));  // an RMPP-reassembled MAD: read it again
        continue;
      }
      if (e == EIO || e == EAGAIN || e == EWOULDBLOCK || e == EINTR || e == ENOSPC) {
        // umad2sim returns these spuriously; back off if they persist so a dead port cannot spin.
        if (++transientErrors > 100) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      ReportFatal(e);
      break;
    }
    tsfn_.Release();
  }

  bool Deliver(const uint8_t* umad, int len) {
    void* u = const_cast<uint8_t*>(umad);
    const ib_mad_addr_t* a = umad_get_mad_addr(u);
    const uint8_t* mad = static_cast<const uint8_t*>(umad_get_mad(u));
    std::unique_lock<std::mutex> lk(mu_);
    while (pendCount_ >= kMaxPending && !stop_.load()) drained_.wait_for(lk, std::chrono::milliseconds(kRecvTimeoutMs));
    if (stop_.load()) return false;
    uint32_t offset = static_cast<uint32_t>(pendData_.size());
    pendData_.insert(pendData_.end(), mad, mad + len);
    size_t base = pendMeta_.size();
    pendMeta_.resize(base + R_STRIDE);
    uint32_t* rec = &pendMeta_[base];
    rec[R_OFFSET] = offset;
    rec[R_LENGTH] = static_cast<uint32_t>(len);
    rec[R_STATUS] = static_cast<uint32_t>(umad_status(u));
    rec[R_AGENT] = reinterpret_cast<const ib_user_mad_t*>(umad)->agent_id;
    rec[R_LID] = ntohs(a->lid);
    rec[R_QPN] = ntohl(a->qpn);
    rec[R_QKEY] = ntohl(a->qkey);
    rec[R_SL] = a->sl;
    rec[R_PATH_BITS] = a->path_bits;
    rec[R_PKEY_INDEX] = a->pkey_index;
    rec[R_GRH] = a->grh_present ? 1 : 0;
    rec[R_GID_INDEX] = a->gid_index;
    rec[R_HOP_LIMIT] = a->hop_limit;
    rec[R_TRAFFIC_CLASS] = a->traffic_class;
    rec[R_FLOW_LABEL] = ntohl(a->flow_label);
    for (int i = 0; i < 4; i++) {
      uint32_t w;
      std::memcpy(&w, a->gid + 4 * i, 4);
      rec[R_GID0 + i] = ntohl(w);
    }
    pendCount_++;
    const bool wake = !notified_;
    notified_ = true;
    lk.unlock();
    return !wake || tsfn_.NonBlockingCall() != napi_closing;
  }

  void ReportFatal(int err) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      fatalErrno_ = err;
      if (notified_) return;
      notified_ = true;
    }
    tsfn_.NonBlockingCall();
  }

  // Main thread: hand the pending batch to JS as (data: Buffer, meta: Uint32Array, count, error?).
  static void CallJs(Napi::Env env, Napi::Function cb, Link* link, void*) {
    UmadPort* self = link ? link->port : nullptr;
    if (env == nullptr || cb == nullptr || self == nullptr) return;
    uint32_t count;
    int fatal;
    {
      std::lock_guard<std::mutex> lk(self->mu_);
      std::swap(self->pendData_, self->takeData_);
      std::swap(self->pendMeta_, self->takeMeta_);
      count = self->pendCount_;
      self->pendCount_ = 0;
      self->notified_ = false;
      fatal = self->fatalErrno_;
      self->fatalErrno_ = 0;
    }
    self->drained_.notify_all();
    try {
      if (count > 0) {
        Napi::Buffer<uint8_t> data = Napi::Buffer<uint8_t>::Copy(env, self->takeData_.data(), self->takeData_.size());
        Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, self->takeMeta_.size() * sizeof(uint32_t));
        std::memcpy(ab.Data(), self->takeMeta_.data(), self->takeMeta_.size() * sizeof(uint32_t));
        self->takeData_.clear();
        self->takeMeta_.clear();
        cb.Call({data, Napi::Uint32Array::New(env, ab.ByteLength() / sizeof(uint32_t), ab, 0), Napi::Number::New(env, count)});
      }
      if (fatal) {
        Napi::Error e = UmadError(env, "umad_recv", fatal, PortName(self->caName_, self->portNum_));
        cb.Call({env.Null(), env.Null(), Napi::Number::New(env, 0), e.Value()});
      }
    } catch (const Napi::Error& e) {
      e.ThrowAsJavaScriptException();  // the receive handler threw: an uncaught exception in JS
    }
  }

  // Main thread, once the receiver has released the thread-safe function (or at env teardown).
  static void OnTsfnFinalize(Napi::Env env, void*, Link* link) {
    UmadPort* self = link->port;
    delete link;
    if (!self) return;
    self->link_ = nullptr;
    self->tsfnLive_ = false;
    self->Shutdown();
    if (self->inst_ && self->inst_->tearingDown) return;
    for (auto& d : self->closeWaiters_) d.Resolve(env.Undefined());
    self->closeWaiters_.clear();
    self->Unref();
  }

  using Tsfn = Napi::TypedThreadSafeFunction<Link, void, &UmadPort::CallJs>;

  Instance* inst_ = nullptr;
  std::string caName_;
  int portNum_ = 0;
  int portid_ = -1;
  int issmFd_ = -1;
  int wakeFd_ = -1;  // eventfd the receiver polls with the umad fd; written to stop it
  size_t umadSize_ = 0;
  std::shared_ptr<SendQueue> sendq_;
  std::thread sender_;
  bool senderLeft_ = false;  // a sender stuck in umad_send was detached at close
  bool direct_ = false;  // a kernel umad device: send() may call umad_send itself
  std::atomic<bool> paced_{false};  // setPace(n > 0): the receiver frees the sender's slots
  bool deferWake_ = false;   // main thread only: send() defers the sender's wake-up to flush()
  bool wakeOwed_ = false;    // main thread only: MADs were queued since the sender last was woken
  std::vector<SendQueue::Item> staged_;     // main thread only: sendMany's MADs for the queue
  std::vector<std::vector<uint8_t>> pool_;  // main thread only: buffers send() and sendMany fill

  std::thread thread_;
  std::atomic<bool> stop_{false};
  Tsfn tsfn_;
  Link* link_ = nullptr;  // owned by the thread-safe function; deleted by its finalizer
  bool tsfnLive_ = false;
  std::vector<Napi::Promise::Deferred> closeWaiters_;

  // Receiver -> main thread hand-off, guarded by mu_.
  std::mutex mu_;
  std::condition_variable drained_;
  std::vector<uint8_t> pendData_;
  std::vector<uint32_t> pendMeta_;
  uint32_t pendCount_ = 0;
  bool notified_ = false;
  int fatalErrno_ = 0;
  int smiAgent_ = -1;      // the class 0x81 agent, for the self-wake SMP (-1: none)
  bool idleWait_ = false;  // the receiver is in its long wait under umad2sim
  bool selfWake_ = false;  // a stop sent the self-wake SMP: the receiver reads its answer, then leaves
  // Main thread only: the batch being handed over (kept to reuse its capacity).
  std::vector<uint8_t> takeData_;
  std::vector<uint32_t> takeMeta_;
};

// umad2simExit(timeoutMs): number. For process exit under umad2sim (ibsim): every open port's
// threads stopped, this process detached from ibsim and what was on its way taken by umad2sim's
// receiver (native/umad2sim-exit.c), then the ports closed; so umad2sim's own atexit clean-up
// finds its receiver in poll() and nothing arriving. 1 detached, 0 not under umad2sim, -errno.
Napi::Value Umad2simExit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int ms = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().Int32Value() : 200;
  Instance* inst = env.GetInstanceData<Instance>();
  std::vector<std::pair<UmadPort*, bool>> stopped;
  if (inst) {
    std::set<UmadPort*> open = inst->open;
    for (UmadPort* p : open) stopped.emplace_back(p, p->StopThreads());
  }
  int r = ibsm_umad2sim_quiesce(ms);
  for (auto& [p, closeUmad] : stopped) p->CloseAfterStop(closeUmad);
  if (inst) inst->CloseParked();
  return Napi::Number::New(env, r);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  Instance* inst = new Instance();
  env.SetInstanceData(inst);
  // Stop every receiver before the environment goes away (worker exit, process teardown).
  env.AddCleanupHook([inst]() {
    inst->tearingDown = true;
    inst->JoinPrefetch();
    inst->prefetched.Release();
    std::set<UmadPort*> open = inst->open;
    for (UmadPort* p : open) p->Shutdown();
    inst->CloseParked();
  });
  Napi::Function ctor = UmadPort::Define(env);
  inst->portCtor = Napi::Persistent(ctor);
  exports.Set("UmadPort", ctor);
  exports.Set("listCas", Napi::Function::New(env, ListCas, "listCas"));
  exports.Set("prefetchCas", Napi::Function::New(env, PrefetchCas, "prefetchCas"));
  exports.Set("endPrefetch", Napi::Function::New(env, EndPrefetch, "endPrefetch"));
  exports.Set("smiGsiPair", Napi::Function::New(env, SmiGsiPair, "smiGsiPair"));
  exports.Set("umad2simExit", Napi::Function::New(env, Umad2simExit, "umad2simExit"));

  Napi::Object rec = Napi::Object::New(env);
  rec.Set("stride", static_cast<uint32_t>(R_STRIDE));
  rec.Set("offset", static_cast<uint32_t>(R_OFFSET));
  rec.Set("length", static_cast<uint32_t>(R_LENGTH));
  rec.Set("status", static_cast<uint32_t>(R_STATUS));
  rec.Set("agent", static_cast<uint32_t>(R_AGENT));
  rec.Set("lid", static_cast<uint32_t>(R_LID));
  rec.Set("qpn", static_cast<uint32_t>(R_QPN));
  rec.Set("qkey", static_cast<uint32_t>(R_QKEY));
  rec.Set("sl", static_cast<uint32_t>(R_SL));
  rec.Set("pathBits", static_cast<uint32_t>(R_PATH_BITS));
  rec.Set("pkeyIndex", static_cast<uint32_t>(R_PKEY_INDEX));
  rec.Set("grh", static_cast<uint32_t>(R_GRH));
  rec.Set("gidIndex", static_cast<uint32_t>(R_GID_INDEX));
  rec.Set("hopLimit", static_cast<uint32_t>(R_HOP_LIMIT));
  rec.Set("trafficClass", static_cast<uint32_t>(R_TRAFFIC_CLASS));
  rec.Set("flowLabel", static_cast<uint32_t>(R_FLOW_LABEL));
  rec.Set("gid", static_cast<uint32_t>(R_GID0));
  exports.Set("RECORD", rec);

  Napi::Object srec = Napi::Object::New(env);
  srec.Set("stride", static_cast<uint32_t>(S_STRIDE));
  srec.Set("agent", static_cast<uint32_t>(S_AGENT));
  srec.Set("offset", static_cast<uint32_t>(S_OFFSET));
  srec.Set("length", static_cast<uint32_t>(S_LENGTH));
  srec.Set("lid", static_cast<uint32_t>(S_LID));
  srec.Set("qpn", static_cast<uint32_t>(S_QPN));
  srec.Set("qkey", static_cast<uint32_t>(S_QKEY));
  srec.Set("sl", static_cast<uint32_t>(S_SL));
  srec.Set("pkeyIndex", static_cast<uint32_t>(S_PKEY_INDEX));
  srec.Set("timeoutMs", static_cast<uint32_t>(S_TIMEOUT_MS));
  srec.Set("maxLength", static_cast<uint32_t>(kDefaultMadLength));
  exports.Set("SEND_RECORD", srec);

  Napi::Object features = Napi::Object::New(env);
  features.Set("openSmiPort", Napi::Boolean::New(env, IBSM_HAVE_OPEN_SMI_PORT != 0));
  features.Set("smiGsiPairs", Napi::Boolean::New(env, IBSM_HAVE_SMI_GSI_PAIRS != 0));
  exports.Set("features", features);
  return exports;
}

}  // namespace

NODE_API_MODULE(ibsm_umad, Init)
