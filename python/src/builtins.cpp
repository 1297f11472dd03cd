// The library's own stages: sinmix, normalize_u8, and the digits MLP with its model.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "binding.h"
#include "streampipe_mlp.h"
#include "streampipe_ops.h"

namespace sp_py {
namespace {

builtin_stage sinmix_stage(unsigned iters)
{
    auto params = std::make_shared<sp_sinmix_params>();
    params->iters = iters;
    return builtin_stage{sp_sinmix_stage(params.get()), params};
}

builtin_stage normalize_u8_stage(size_t elements, float scale, float shift)
{
    auto params = std::make_shared<sp_normalize_u8_params>();
    params->elements = elements;
    params->scale = scale;
    params->shift = shift;
    return builtin_stage{sp_normalize_u8_stage(params.get()), params};
}

struct mlp_model {
    std::shared_ptr<sp_mlp> model;
};

// A failed load still yields a model, whose last error says why.
mlp_model adopt_model(sp_status status, sp_mlp *model)
{
    std::shared_ptr<sp_mlp> owned(model, sp_mlp_free);
    if (status != SP_OK)
        raise_status(status, sp_mlp_last_error(model));
    return mlp_model{owned};
}

mlp_model load_file(const std::string &path)
{
    sp_mlp *model = nullptr;
    sp_status status;
    gil_released unlocked;
    status = sp_mlp_load_file(path.c_str(), &model);
    unlocked.relock();
    return adopt_model(status, model);
}

mlp_model load_bytes(nb::bytes data)
{
    sp_mlp *model = nullptr;
    sp_status status = sp_mlp_load_bytes(data.c_str(), data.size(), &model);
    return adopt_model(status, model);
}

// Read-only views of one layer's weight [outputs, inputs] and bias [outputs]; the model stays
// alive while they do.
nb::tuple model_layer(nb::pointer_and_handle<mlp_model> self, size_t index)
{
    sp_mlp_layer layer = sp_mlp_layer_at(self.p->model.get(), index);
    if (!layer.weight)
        raise_status(SP_ERR_INVALID_ARGUMENT, "no such layer");
    size_t weight_shape[2] = {layer.outputs, layer.inputs};
    size_t bias_shape[1] = {layer.outputs};
    using view = nb::ndarray<nb::numpy, const float>;
    return nb::make_tuple(view(layer.weight, 2, weight_shape, self.h),
                          view(layer.bias, 1, bias_shape, self.h));
}

void reference_logits(const mlp_model &m,
                      nb::ndarray<const uint8_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> pixels,
                      nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu> logits)
{
    gil_released unlocked;
    sp_mlp_reference_logits(m.model.get(), pixels.data(), pixels.shape(0), logits.data());
}

struct mlp_stages {
    std::shared_ptr<sp_mlp_stages> stages;
};

void make_mlp_stages(mlp_stages *self, const context &ctx, const mlp_model &model, int precision)
{
    sp_mlp_stages *stages = nullptr;
    sp_status status;
    gil_released unlocked; // uploads the weights on CUDA
    status = sp_mlp_stages_create(ctx.handle->ctx, model.model.get(),
                                  (sp_mlp_precision)precision, &stages);
    unlocked.relock();
    if (status != SP_OK) { // a failed creation still yields a handle, with the reason
        std::unique_ptr<sp_mlp_stages, void (*)(sp_mlp_stages *)> failed(stages,
                                                                          sp_mlp_stages_destroy);
        raise_status(status, sp_mlp_stages_last_error(stages));
    }
    // The stages go first; the model and the context they use are let go after.
    auto keep_model = model.model;
    auto keep_ctx = ctx.handle;
    new (self) mlp_stages{std::shared_ptr<sp_mlp_stages>(
        stages, [keep_model, keep_ctx](sp_mlp_stages *s) { sp_mlp_stages_destroy(s); })};
}

std::vector<builtin_stage> mlp_stage_list(const mlp_stages &self)
{
    const sp_stage *list = sp_mlp_stages_list(self.stages.get());
    std::vector<builtin_stage> out;
    for (size_t i = 0; i < SP_MLP_STAGES; i++)
        out.push_back(builtin_stage{list[i], self.stages});
    return out;
}

} // namespace

void bind_builtins(nb::module_ &m)
{
    nb::class_<builtin_stage>(m, "BuiltinStage")
        .def_prop_ro("name", [](const builtin_stage &b) { return std::string(b.stage.name); })
        .def_prop_ro("out_record_bytes", [](const builtin_stage &b) { return b.stage.out_record_bytes; })
        .def_prop_ro("streams", [](const builtin_stage &b) { return b.stage.streams; })
        .def_prop_ro("scratch_bytes", [](const builtin_stage &b) { return b.stage.scratch_bytes; });
    m.def("sinmix_stage", &sinmix_stage, nb::arg("iters"));
    m.def("normalize_u8_stage", &normalize_u8_stage, nb::arg("elements"), nb::arg("scale"),
          nb::arg("shift"));

    m.attr("MLP_INPUTS") = SP_MLP_INPUTS;
    m.attr("MLP_HIDDEN") = SP_MLP_HIDDEN;
    m.attr("MLP_CLASSES") = SP_MLP_CLASSES;
    m.attr("MLP_LAYERS") = SP_MLP_LAYERS;
    m.attr("MLP_MAX_PIXEL") = SP_MLP_MAX_PIXEL;
    m.attr("MLP_FP32") = (int)SP_MLP_FP32;
    m.attr("MLP_TF32") = (int)SP_MLP_TF32;

    nb::class_<mlp_model>(m, "MlpModel")
        .def_static("load_file", &load_file, nb::arg("path"))
        .def_static("load_bytes", &load_bytes, nb::arg("data"))
        .def("layer", &model_layer, nb::arg("index"))
        .def("reference_logits", &reference_logits, nb::arg("pixels").noconvert(),
             nb::arg("logits").noconvert());

    nb::class_<mlp_stages>(m, "MlpStages")
        .def("__init__", &make_mlp_stages, nb::arg("ctx"), nb::arg("model"), nb::arg("precision"))
        .def("stages", &mlp_stage_list)
        .def("last_error", [](const mlp_stages &s) {
            return std::string(sp_mlp_stages_last_error(s.stages.get()));
        });
}

} // namespace sp_py
