// dcuda's performance model (extension, not in the thesis): the time dcuda's notified puts take,
// predicted from parameters fitted to this machine's benchmark results by the dcuda-model tool.
// The model (L, o, O(m), g, G(m), S for each path and initiator) and its file are described in
// docs/model.md; docs/api.md "Performance model (extension)" describes the calls.
//
// Errors end the process as the calls of dcuda/host.h do (message, error handler, exit status 1).
#pragma once

#include <cstddef>

// The way a notified put travels from its initiator to its target.
enum dcuda_model_path {
  DCUDA_MODEL_SAME_GPU = 0,  // between ranks of one GPU
  DCUDA_MODEL_PEER = 1,      // to another GPU of the node, by NVLink or PCIe stores
  DCUDA_MODEL_NETWORK = 2    // to another node, through the host proxies
};

// Who issues it.
enum dcuda_model_initiator {
  DCUDA_MODEL_DEVICE = 0,  // a rank inside the persistent kernel (dcuda_put_notify)
  DCUDA_MODEL_HOST = 1     // the host, ordered on a stream (dcuda_put_notify_on_stream)
};

// Reads the model file `file` (written by dcuda-model --write) and makes it the model of later
// predictions, replacing the one loaded before. Without a call, the first prediction loads the
// file named by DCUDA_MODEL_FILE. Thread-safe.
void dcuda_model_load(const char* file);

// The predicted time in microseconds from the first put's start until the last of `count` (>= 1)
// notified puts of `bytes` each, issued back to back by one initiator to one target, is notified
// there: single message T(m) = L + o + S + (O + G) m (o and O those of m's range of sizes); each
// further message max(g, m (G + A min(m, M)^B)), M the largest size the fit measured. An error
// where the model has no fit of this path and initiator (the pipelined fit as well where
// count > 1).
double dcuda_model_predict(dcuda_model_path path, dcuda_model_initiator initiator, size_t bytes,
                           int count);

// The predicted time in microseconds from the first put's start until the last of `count` (>= 1)
// notified puts of `bytes` each, spread over `streams` (>= 1) streams of one GPU whose work is
// all queued when the first starts, is notified: T(m) as above, then each further message the
// GPU's aggregate time per message from that many streams, g + m G (measured by
// host_stream_concurrency, interpolated between the stream counts it measured). Without such a
// fit, one stream is dcuda_model_predict and more streams an error. `streams` below 1, or above 1
// with DCUDA_MODEL_DEVICE (a rank's puts are not issued from streams), is refused before any
// model is loaded.
double dcuda_model_predict_streams(dcuda_model_path path, dcuda_model_initiator initiator,
                                   size_t bytes, int count, int streams);

// The time in microseconds the GPU spends passing `count` (>= 1) stream waits
// (dcuda_wait_notifications_on_stream) whose notifications have already arrived, queued on
// `streams` (>= 1) streams: a GPU passes them one after another, whatever the streams
// (host_stream_concurrency), so a program that waits on many streams pays count w besides its
// puts. An error where the model has no concurrent fit of `path`'s host initiator.
double dcuda_model_predict_stream_waits(dcuda_model_path path, int count, int streams);
