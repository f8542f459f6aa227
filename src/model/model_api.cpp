// dcuda_model_load and the predictions (include/dcuda/model.h): one process-wide model, loaded on
// demand from DCUDA_MODEL_FILE (model/process_model.h).
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include "dcuda/model.h"
#include "model/model_parameters.h"
#include "model/process_model.h"
#include "runtime/api_boundary.h"

namespace {

using dcuda::runtime::error;

struct loaded_model {
  std::mutex mutex;
  std::optional<dcuda::model::parameters> parameters;
};

loaded_model& process_model() {
  static loaded_model model;
  return model;
}

dcuda::model::parameters read_model_file(const std::string& file, dcuda_error_code code) {
  std::ifstream in(file);
  if (!in) throw error(code, "cannot open the model file '" + file + "'");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return dcuda::model::parse_model(text.str(), file);
  } catch (const error& failure) {
    throw error(code, failure.what());
  }
}

}  // namespace

void dcuda_model_load(const char* file) {
  dcuda::runtime::guarded("dcuda_model_load", [&] {
    if (file == nullptr) throw error(DCUDA_ERROR_INVALID_ARGUMENT, "the file name is NULL");
    auto parameters = read_model_file(file, DCUDA_ERROR_INVALID_ARGUMENT);
    std::lock_guard<std::mutex> lock(process_model().mutex);
    process_model().parameters = std::move(parameters);
  });
}

dcuda::model::parameters dcuda::model::process_parameters() {
  std::lock_guard<std::mutex> lock(process_model().mutex);
  if (!process_model().parameters) {
    const char* file = std::getenv("DCUDA_MODEL_FILE");
    if (file == nullptr || *file == '\0') {
      throw error(DCUDA_ERROR_INVALID_STATE,
                  "no model loaded: call dcuda_model_load or set DCUDA_MODEL_FILE to a file "
                  "written by dcuda-model --write");
    }
    process_model().parameters = read_model_file(file, DCUDA_ERROR_SETTING);
  }
  return *process_model().parameters;
}

namespace {

// The checks every prediction's arguments share (and of `streams`, where the call has them), all
// before the process's model is loaded, then `predict` with that model.
template <typename Predict>
double predicted(const char* call, dcuda_model_path path, dcuda_model_initiator initiator,
                 int count, std::optional<int> streams, Predict&& predict) {
  return dcuda::runtime::guarded(call, [&] {
    if (path != DCUDA_MODEL_SAME_GPU && path != DCUDA_MODEL_PEER && path != DCUDA_MODEL_NETWORK) {
      throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                  "path " + std::to_string(static_cast<int>(path)) +
                      " is not DCUDA_MODEL_SAME_GPU, DCUDA_MODEL_PEER or DCUDA_MODEL_NETWORK");
    }
    if (initiator != DCUDA_MODEL_DEVICE && initiator != DCUDA_MODEL_HOST) {
      throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                  "initiator " + std::to_string(static_cast<int>(initiator)) +
                      " is not DCUDA_MODEL_DEVICE or DCUDA_MODEL_HOST");
    }
    if (count < 1) {
      throw error(DCUDA_ERROR_INVALID_ARGUMENT, "count " + std::to_string(count) + " is below 1");
    }
    if (streams) dcuda::model::check_streams(initiator, *streams);
    return predict(dcuda::model::process_parameters());
  });
}

}  // namespace

double dcuda_model_predict(dcuda_model_path path, dcuda_model_initiator initiator, size_t bytes,
                           int count) {
  return predicted("dcuda_model_predict", path, initiator, count, std::nullopt,
                   [&](const dcuda::model::parameters& model) {
                     return dcuda::model::predict(model, path, initiator, bytes, count);
                   });
}

double dcuda_model_predict_streams(dcuda_model_path path, dcuda_model_initiator initiator,
                                   size_t bytes, int count, int streams) {
  return predicted("dcuda_model_predict_streams", path, initiator, count, streams,
                   [&](const dcuda::model::parameters& model) {
                     return dcuda::model::predict_streams(model, path, initiator, bytes, count,
                                                          streams);
                   });
}

double dcuda_model_predict_stream_waits(dcuda_model_path path, int count, int streams) {
  return predicted("dcuda_model_predict_stream_waits", path, DCUDA_MODEL_HOST, count, streams,
                   [&](const dcuda::model::parameters& model) {
                     return dcuda::model::predict_stream_waits(model, path, count, streams);
                   });
}
