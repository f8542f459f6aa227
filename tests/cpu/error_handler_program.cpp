// A program whose dcuda call fails on the host, before any GPU is needed; its error handler writes
// what it receives on standard error. CTest runs it (cmake/expect_error_exit.cmake) and checks
// the exit status, the printed error, and what the handler saw.
//
//   error_handler_program MODE [--dcuda-... arguments]
//   MODE: null-context    dcuda_host_get_rank_info(NULL, ...): DCUDA_ERROR_INVALID_ARGUMENT
//         stale-context   dcuda_host_run on a handle dcuda_host_init never made:
//                         DCUDA_ERROR_INVALID_ARGUMENT (the GPU tests try finished ones)
//         init            dcuda_host_init with the settings of the environment and the
//                         arguments after MODE: DCUDA_ERROR_SETTING for a malformed one, else
//                         DCUDA_ERROR_CUDA (no GPU here; on a GPU, `kernel` is no kernel)
//         threads-0, threads-1025
//                         dcuda_host_init with that threads_per_rank:
//                         DCUDA_ERROR_INVALID_ARGUMENT, before any GPU is needed
//         run-null        dcuda_host_run(NULL): DCUDA_ERROR_INVALID_ARGUMENT
//         finish-stale    dcuda_host_finish on a handle dcuda_host_init never made:
//                         DCUDA_ERROR_INVALID_ARGUMENT
//         type-*          a datatype call with a bad argument (no GPU needed):
//                         DCUDA_ERROR_INVALID_ARGUMENT naming the call and the value
//                         (type-negative-count, type-null-blocklengths, type-freed,
//                         type-struct-freed-part, type-subarray-start, type-too-many-runs,
//                         type-free-predefined, type-unpack-overlapping)
//         model-predict   dcuda_model_predict(peer, device, 8 B, 1) with no model loaded: the
//                         file of DCUDA_MODEL_FILE, else DCUDA_ERROR_INVALID_STATE
//         model-count-0   dcuda_model_predict with count 0: DCUDA_ERROR_INVALID_ARGUMENT
//         model-streams-0 dcuda_model_predict_streams(peer, host, 8 B, 1, 0 streams):
//                         DCUDA_ERROR_INVALID_ARGUMENT, before any model is loaded
//         model-device-streams-4
//                         dcuda_model_predict_streams(peer, device, 8 B, 1, 4 streams):
//                         DCUDA_ERROR_INVALID_ARGUMENT, before any model is loaded
//         model-waits-streams-0
//                         dcuda_model_predict_stream_waits(peer, 1, 0 streams):
//                         DCUDA_ERROR_INVALID_ARGUMENT, before any model is loaded
//         model-load FILE dcuda_model_load(FILE), which must succeed, then a prediction of 2
//                         pipelined messages on the network path from the host, which FILE has
//                         single messages of alone: DCUDA_ERROR_INVALID_STATE
//         default-handler a handler set, then NULL: only dcuda's own message
//         handler-fails   the handler itself calls a failing dcuda function: the process ends
//                         at once, with the handler entered once
#include <cstdio>
#include <cstring>
#include <string>

#include "dcuda/datatype.h"
#include "dcuda/host.h"
#include "dcuda/model.h"

namespace {

int handler_calls = 0;

void write_error(const dcuda_error_info* error, void* user_data) {
  ++handler_calls;
  std::fprintf(stderr,
               "handler: user_data=%s code=%s (%d) call=%s process_index=%d gpu_usable=%d "
               "message=[%s] calls=%d\n",
               static_cast<const char*>(user_data), dcuda_error_name(error->code),
               static_cast<int>(error->code), error->call, error->process_index, error->gpu_usable,
               error->message, handler_calls);
  std::fflush(stderr);
}

void failing_handler(const dcuda_error_info* error, void* user_data) {
  write_error(error, user_data);
  dcuda_host_finish(nullptr);  // must not be called here: ends the process at once
  std::fprintf(stderr, "handler: returned from dcuda_host_finish\n");
}

void kernel(dcuda_context_handle) {}

// The datatype call of `mode` with its bad argument; returns only if the call did.
int datatype_misuse(const std::string& mode) {
  dcuda_datatype type = DCUDA_DATATYPE_NULL;
  const int displacements[] = {0, 4, 8};
  if (mode == "type-negative-count") {
    dcuda_type_vector(-3, 1, 2, DCUDA_INT, &type);
  } else if (mode == "type-null-blocklengths") {
    dcuda_type_indexed(3, nullptr, displacements, DCUDA_INT, &type);
  } else if (mode == "type-freed") {
    dcuda_type_contiguous(2, DCUDA_INT, &type);
    const dcuda_datatype stale = type;
    dcuda_type_free(&type);
    dcuda_type_commit(const_cast<dcuda_datatype*>(&stale));
  } else if (mode == "type-struct-freed-part") {
    dcuda_datatype part;
    dcuda_type_contiguous(2, DCUDA_INT, &part);
    const dcuda_datatype parts[] = {DCUDA_DOUBLE, part};
    dcuda_type_free(&part);
    const int lengths[] = {1, 1};
    const std::int64_t bytes[] = {0, 8};
    dcuda_type_struct(2, lengths, bytes, parts, &type);
  } else if (mode == "type-subarray-start") {
    const int sizes[] = {4, 5}, subsizes[] = {2, 3}, starts[] = {1, 3};
    dcuda_type_subarray(2, sizes, subsizes, starts, DCUDA_ORDER_C, DCUDA_DOUBLE, &type);
  } else if (mode == "type-too-many-runs") {
    dcuda_type_vector(1 << 30, 1, 2, DCUDA_BYTE, &type);
  } else if (mode == "type-free-predefined") {
    dcuda_datatype predefined = DCUDA_DOUBLE;
    dcuda_type_free(&predefined);
  } else if (mode == "type-unpack-overlapping") {
    dcuda_type_resized(DCUDA_INT64, 0, 4, &type);  // each element meets the next
    dcuda_type_commit(&type);
    dcuda_unpack_async(type, 2, reinterpret_cast<void*>(64), reinterpret_cast<void*>(128), nullptr);
  } else {
    std::fprintf(stderr, "unknown mode '%s'\n", mode.c_str());
    return 2;
  }
  std::fprintf(stderr, "the failing call returned\n");
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  const std::string mode = argc > 1 ? argv[1] : "";
  static char user_data[] = "checkpoint";
  dcuda_host_set_error_handler(mode == "handler-fails" ? failing_handler : write_error, user_data);
  std::printf("before the error\n");  // dcuda flushes it before it prints the error
  if (mode == "null-context" || mode == "handler-fails") {
    dcuda_rank_info info{};
    dcuda_host_get_rank_info(nullptr, &info);
  } else if (mode == "stale-context") {
    // A handle the program made up.
    alignas(16) static char not_a_context[64] = {};
    dcuda_host_run(reinterpret_cast<dcuda_host_context_handle>(not_a_context));
  } else if (mode == "init") {
    dcuda_host_context_handle ctx = nullptr;
    dcuda_host_init(argc - 1, argv + 1, &ctx, kernel, 32);
  } else if (mode == "threads-0" || mode == "threads-1025") {
    dcuda_host_context_handle ctx = nullptr;
    dcuda_host_init(0, nullptr, &ctx, kernel, mode == "threads-0" ? 0 : 1025);
  } else if (mode == "run-null") {
    dcuda_host_run(nullptr);
  } else if (mode == "finish-stale") {
    alignas(16) static char made_up[64] = {};
    dcuda_host_finish(reinterpret_cast<dcuda_host_context_handle>(made_up));
  } else if (mode.rfind("type-", 0) == 0) {
    return datatype_misuse(mode);
  } else if (mode == "model-predict" || mode == "model-count-0") {
    dcuda_model_predict(DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 8, mode == "model-count-0" ? 0 : 1);
  } else if (mode == "model-streams-0") {
    std::fprintf(stderr, "returned %f\n",
                 dcuda_model_predict_streams(DCUDA_MODEL_PEER, DCUDA_MODEL_HOST, 8, 1, 0));
  } else if (mode == "model-device-streams-4") {
    std::fprintf(stderr, "returned %f\n",
                 dcuda_model_predict_streams(DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 8, 1, 4));
  } else if (mode == "model-waits-streams-0") {
    std::fprintf(stderr, "returned %f\n", dcuda_model_predict_stream_waits(DCUDA_MODEL_PEER, 1, 0));
  } else if (mode == "model-load" && argc > 2) {
    dcuda_model_load(argv[2]);
    std::fprintf(stderr, "peer device, 8 B: %.3f us\n",
                 dcuda_model_predict(DCUDA_MODEL_PEER, DCUDA_MODEL_DEVICE, 8, 1));
    dcuda_model_predict(DCUDA_MODEL_NETWORK, DCUDA_MODEL_HOST, 8, 2);
  } else if (mode == "default-handler") {
    dcuda_host_set_error_handler(nullptr, nullptr);
    dcuda_host_get_timings(nullptr);
  } else {
    std::fprintf(stderr, "unknown mode '%s'\n", mode.c_str());
    return 2;
  }
  std::fprintf(stderr, "the failing call returned\n");
  return 0;
}
