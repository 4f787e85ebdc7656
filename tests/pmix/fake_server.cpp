// pmix_fake_server: a one-host PMIx launcher that misbehaves on request, for
// the tests of the `pmix` bootstrap's failure paths (mpirun and srun cannot
// be made to refuse a key or drop a fence on purpose).
//
//   pmix_fake_server [--fault F] [--notify] [--timeout S] -n N PROGRAM ARGS...
//
// Starts N ranks of PROGRAM as PMIx clients of this process. Every fence
// reaches fence_nb below (the local-only shortcut is switched off), which
// answers with the ranks' data, unless --fault says otherwise:
//   lose-key      the job has one more rank, on another host, that is never
//                 started: the server completes fences without its data, so
//                 its keys never arrive
//   fence-error:K the K-th fence completes with PMIX_ERR_UNREACH
//   fence-hang:K  the K-th fence never completes
// --notify: when a rank ends, the others get a PMIx event naming it
// (PMIX_ERR_EXIT_NONZERO_TERM, PMIX_ERR_PROC_ABORTED_BY_SIG or
// PMIX_EVENT_PROC_TERMINATED, with PMIX_EVENT_AFFECTED_PROC and
// PMIX_EXIT_CODE), as a PMIx 4 launcher does.
//
// Exit status: 0 when every rank exited 0, else the first failing rank's
// (128 + signal when killed); 124 when --timeout S passed (ranks killed);
// 2 on a usage or set-up error.

#include <pmix.h>
#include <pmix_server.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

constexpr const char* kNamespace = "grove-fake.1";

struct Options {
  std::string fault = "none";
  int fault_fence = 0;  // 1-based fence number for fence-error / fence-hang
  bool notify = false;
  int timeout_s = 60;
  int ranks = 0;
  std::vector<std::string> argv;
};

Options options;
std::atomic<int> fences{0};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "pmix_fake_server: %s\nusage: pmix_fake_server [--fault lose-key|fence-error:K|"
               "fence-hang:K] [--notify] [--timeout S] -n N PROGRAM ARGS...\n",
               why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--fault") {
      const std::string f = value();
      const size_t colon = f.find(':');
      o.fault = f.substr(0, colon);
      if (colon != std::string::npos) o.fault_fence = std::atoi(f.c_str() + colon + 1);
      const bool numbered = o.fault == "fence-error" || o.fault == "fence-hang";
      if (!(o.fault == "lose-key" || (numbered && o.fault_fence >= 1))) usage("bad --fault " + f);
    } else if (arg == "--notify") {
      o.notify = true;
    } else if (arg == "--timeout") {
      o.timeout_s = std::atoi(value().c_str());
    } else if (arg == "-n") {
      o.ranks = std::atoi(value().c_str());
    } else {
      usage("unknown option " + arg);
    }
  }
  if (o.ranks < 1) usage("-n N (N >= 1) is required");
  if (i >= argc) usage("no program given");
  for (; i < argc; ++i)
    o.argv.emplace_back(argv[i]);
  return o;
}

pmix_status_t fence_nb(const pmix_proc_t*, size_t, const pmix_info_t*, size_t, char* data,
                       size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  const int k = ++fences;
  if (options.fault == "fence-hang" && k == options.fault_fence) return PMIX_SUCCESS;
  const pmix_status_t status =
      options.fault == "fence-error" && k == options.fault_fence ? PMIX_ERR_UNREACH : PMIX_SUCCESS;
  // The server library shifts the callback to its own thread: calling it
  // from here is allowed. `data` stays valid until the callback returns.
  cbfunc(status, status == PMIX_SUCCESS ? data : nullptr, status == PMIX_SUCCESS ? ndata : 0,
         cbdata, nullptr, nullptr);
  return PMIX_SUCCESS;
}

pmix_status_t direct_modex(const pmix_proc_t*, const pmix_info_t*, size_t, pmix_modex_cbfunc_t,
                           void*) {
  return PMIX_ERR_NOT_SUPPORTED;
}

std::vector<pid_t> children;

pmix_status_t abort_fn(const pmix_proc_t*, void*, int, const char msg[], pmix_proc_t*, size_t,
                       pmix_op_cbfunc_t, void*) {
  std::fprintf(stderr, "pmix_fake_server: a rank called PMIx_Abort: %s\n", msg ? msg : "");
  for (pid_t pid : children)
    if (pid > 0) ::kill(pid, SIGKILL);
  return PMIX_OPERATION_SUCCEEDED;
}

// Waits for a PMIx call that reports through an op callback.
struct OpWait {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t status = PMIX_SUCCESS;
  static void callback(pmix_status_t status, void* cbdata) {
    auto* self = static_cast<OpWait*>(cbdata);
    std::lock_guard lock(self->mutex);
    self->done = true;
    self->status = status;
    self->cv.notify_all();
  }
  pmix_status_t wait() {
    std::unique_lock lock(mutex);
    cv.wait(lock, [this] { return done; });
    return status;
  }
};

void check(pmix_status_t rc, const char* what) {
  if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
    std::fprintf(stderr, "pmix_fake_server: %s: %s\n", what, PMIx_Error_string(rc));
    std::exit(2);
  }
}

// One rank's PMIX_PROC_DATA entry: rank, node, host name.
void load_proc_data(pmix_info_t* out, uint32_t rank, bool remote, const std::string& host) {
  PMIX_LOAD_KEY(out->key, PMIX_PROC_DATA);
  out->value.type = PMIX_DATA_ARRAY;
  PMIX_DATA_ARRAY_CREATE(out->value.data.darray, 4, PMIX_INFO);
  auto* items = static_cast<pmix_info_t*>(out->value.data.darray->array);
  pmix_rank_t r = rank;
  uint32_t node = remote ? 1 : 0;
  uint16_t local_rank = static_cast<uint16_t>(rank);
  PMIx_Info_load(&items[0], PMIX_RANK, &r, PMIX_PROC_RANK);
  PMIx_Info_load(&items[1], PMIX_NODEID, &node, PMIX_UINT32);
  PMIx_Info_load(&items[2], PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
  PMIx_Info_load(&items[3], PMIX_LOCAL_RANK, &local_rank, PMIX_UINT16);
}

void register_job(const std::string& host) {
  const uint32_t local = static_cast<uint32_t>(options.ranks);
  const uint32_t size = local + (options.fault == "lose-key" ? 1 : 0);
  std::string peers;
  for (uint32_t r = 0; r < local; ++r)
    peers += (r ? "," : "") + std::to_string(r);
  const std::string remote_host = "fake-remote-host";
  const uint32_t nodes = size > local ? 2 : 1;

  std::vector<pmix_info_t> info(6 + size);
  for (pmix_info_t& i : info)
    PMIX_INFO_CONSTRUCT(&i);
  PMIx_Info_load(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
  PMIx_Info_load(&info[1], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
  PMIx_Info_load(&info[2], PMIX_LOCAL_SIZE, &local, PMIX_UINT32);
  PMIx_Info_load(&info[3], PMIX_LOCAL_PEERS, peers.c_str(), PMIX_STRING);
  PMIx_Info_load(&info[4], PMIX_NUM_NODES, &nodes, PMIX_UINT32);
  PMIx_Info_load(&info[5], PMIX_JOBID, kNamespace, PMIX_STRING);
  for (uint32_t r = 0; r < size; ++r)
    load_proc_data(&info[6 + r], r, r >= local, r >= local ? remote_host : host);

  OpWait done;
  check(PMIx_server_register_nspace(kNamespace, static_cast<int>(local), info.data(), info.size(),
                                    &OpWait::callback, &done),
        "PMIx_server_register_nspace");
  check(done.wait(), "registering the namespace");
  for (pmix_info_t& i : info)
    PMIX_INFO_DESTRUCT(&i);
}

pid_t start_rank(int rank) {
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, kNamespace, static_cast<pmix_rank_t>(rank));
  OpWait registered;
  check(PMIx_server_register_client(&proc, ::getuid(), ::getgid(), nullptr, &OpWait::callback,
                                    &registered),
        "PMIx_server_register_client");
  check(registered.wait(), "registering a client");
  // A NULL-terminated copy of our environment; setup_fork adds PMIx's.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e)
    env_strings.emplace_back(*e);
  char** env = static_cast<char**>(std::calloc(env_strings.size() + 1, sizeof(char*)));
  for (size_t i = 0; i < env_strings.size(); ++i)
    env[i] = ::strdup(env_strings[i].c_str());
  check(PMIx_server_setup_fork(&proc, &env), "PMIx_server_setup_fork");
  std::vector<char*> argv;
  for (const std::string& a : options.argv)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execvpe(argv[0], argv.data(), env);
    std::fprintf(stderr, "pmix_fake_server: cannot run %s: %s\n", argv[0], std::strerror(errno));
    std::_Exit(127);
  }
  for (char** e = env; *e != nullptr; ++e)
    std::free(*e);
  std::free(env);
  if (pid < 0) {
    std::fprintf(stderr, "pmix_fake_server: fork: %s\n", std::strerror(errno));
    std::exit(2);
  }
  return pid;
}

void notify_departure(int rank, int status) {
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, kNamespace, static_cast<pmix_rank_t>(rank));
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  pmix_status_t event = WIFSIGNALED(status) ? PMIX_ERR_PROC_ABORTED_BY_SIG
                        : code != 0         ? PMIX_ERR_EXIT_NONZERO_TERM
                                            : PMIX_EVENT_PROC_TERMINATED;
  pmix_info_t info[2];
  PMIX_INFO_CONSTRUCT(&info[0]);
  PMIX_INFO_CONSTRUCT(&info[1]);
  PMIx_Info_load(&info[0], PMIX_EVENT_AFFECTED_PROC, &proc, PMIX_PROC);
  PMIx_Info_load(&info[1], PMIX_EXIT_CODE, &code, PMIX_INT);
  OpWait sent;
  const pmix_status_t rc =
      PMIx_Notify_event(event, &proc, PMIX_RANGE_LOCAL, info, 2, &OpWait::callback, &sent);
  if (rc == PMIX_SUCCESS) sent.wait();
  if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
    std::fprintf(stderr, "pmix_fake_server: PMIx_Notify_event: %s\n", PMIx_Error_string(rc));
  }
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
}

}  // namespace

int main(int argc, char** argv) {
  options = parse(argc, argv);
  // Every fence goes through fence_nb, even when all its ranks are local.
  ::setenv("PMIX_MCA_pmix_server_fence_localonly_opt", "0", 1);

  char dir[] = "/tmp/grove-pmix-fake.XXXXXX";
  if (::mkdtemp(dir) == nullptr) {
    std::perror("pmix_fake_server: mkdtemp");
    return 2;
  }
  pmix_server_module_t module{};
  module.abort = abort_fn;
  module.fence_nb = fence_nb;
  module.direct_modex = direct_modex;
  pmix_info_t init[2];
  PMIX_INFO_CONSTRUCT(&init[0]);
  PMIX_INFO_CONSTRUCT(&init[1]);
  PMIx_Info_load(&init[0], PMIX_SERVER_TMPDIR, dir, PMIX_STRING);
  PMIx_Info_load(&init[1], PMIX_SYSTEM_TMPDIR, dir, PMIX_STRING);
  check(PMIx_server_init(&module, init, 2), "PMIx_server_init");

  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  register_job(host);
  children.resize(static_cast<size_t>(options.ranks), -1);
  for (int r = 0; r < options.ranks; ++r)
    children[static_cast<size_t>(r)] = start_rank(r);

  int result = 0;
  int running = options.ranks;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.timeout_s);
  while (running > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "pmix_fake_server: timed out after %d s\n", options.timeout_s);
        for (pid_t p : children)
          if (p > 0) ::kill(p, SIGKILL);
        while (::waitpid(-1, nullptr, 0) > 0) {
        }
        result = 124;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    for (int r = 0; r < options.ranks; ++r) {
      if (children[static_cast<size_t>(r)] != pid) continue;
      children[static_cast<size_t>(r)] = -1;
      --running;
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (code != 0) {
        std::fprintf(stderr, "pmix_fake_server: rank %d ended with status %d\n", r, code);
        if (result == 0) result = code;
      }
      if (options.notify && running > 0) notify_departure(r, status);
    }
  }
  PMIx_server_deregister_nspace(kNamespace, nullptr, nullptr);
  PMIx_server_finalize();
  PMIX_INFO_DESTRUCT(&init[0]);
  PMIX_INFO_DESTRUCT(&init[1]);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return result;
}
