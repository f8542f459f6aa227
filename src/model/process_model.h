// The model of this process: the one dcuda_model_load loaded, else the file DCUDA_MODEL_FILE names,
// read on first use. Shared by the prediction calls (model_api.cpp) and the settings the model
// chooses at dcuda_host_init (DCUDA_NETWORK_CHUNK=model).
#pragma once

#include "model/model_parameters.h"

namespace dcuda::model {

// A copy of the process's model; runtime::error with DCUDA_ERROR_INVALID_STATE where none was
// loaded and DCUDA_MODEL_FILE is not set, DCUDA_ERROR_SETTING where that file cannot be read.
// Thread-safe.
parameters process_parameters();

}  // namespace dcuda::model
