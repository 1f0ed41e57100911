// Checked kernel launches.
#pragma once

#include "objects.hpp"

namespace cuabi {

void launch(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
            void* const* params, size_t num_params);
void launch_sized(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
                  void* const* params, const size_t* sizes, size_t num_params);
void launch_packed(const Function& f, const cuabi_launch_config* config, const Pin<Stream>& stream,
                   const void* args, size_t args_size);

Ref<LaunchPlan> make_plan(Ref<Function> function, const cuabi_launch_config* config,
                          Ref<Stream> stream);

}  // namespace cuabi
