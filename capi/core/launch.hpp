// Checked kernel launches.
#pragma once

#include "objects.hpp"

namespace cuabi {

// The checks a binding runs once per argument signature; the launches run
// the same ones, so every binding reports a mismatch in the same words.
void need_params(const Function& f);
void check_arg_size(const Function& f, size_t index, size_t size);
void check_arg_sizes(const Function& f, const size_t* sizes, size_t count, const char* what);

void launch(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
            void* const* params, size_t num_params);
void launch_sized(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
                  void* const* params, const size_t* sizes, size_t num_params);
void launch_packed(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
                   const void* args, size_t args_size);

Ref<LaunchPlan> make_plan(Ref<Function> function, const cuabi_launch_config* config,
                          Ref<Stream> stream);

}  // namespace cuabi
