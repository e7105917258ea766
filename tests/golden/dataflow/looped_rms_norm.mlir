// Loom TileProgram of kernel t ()
"builtin.module"() ({
  "func.func"() <{function_type = (memref<64x256xbf16>, memref<1x256xbf16>, memref<64x256xbf16>, memref<64x1xf32>) -> (), sym_name = "t"}> ({
  ^bb0(%x: memref<64x256xbf16>, %w: memref<1x256xbf16>, %out: memref<64x256xbf16>, %inv_rms: memref<64x1xf32>):
    %tile_m = "loom.sym"() {symbol_ref = @tile_m, kind = "tile", lower_bound = 32 : index, upper_bound = 64 : index, alignment = 32 : index} : () -> index
    %tile_x_d1 = "loom.sym"() {symbol_ref = @tile_x_d1, kind = "tile", lower_bound = 32 : index, upper_bound = 256 : index, alignment = 32 : index} : () -> index
    "loom.grid"() ({
    ^bb0(%tile_m_id: index):
      %ss_init = "loom.full"() {value = 0.0 : f64, shape = ["tile_m"]} : () -> tensor<?xf32>
      %ss = "loom.for"(%ss_init) ({
      ^bb0(%tile_x_d1_id: index, %ss_acc: tensor<?xf32>):
        %x_tile_chunk = "loom.load"(%x) {offsets = ["tile_m*tile_m_id", "tile_x_d1*tile_x_d1_id"], sizes = ["tile_m", "tile_x_d1"]} : (memref<64x256xbf16>) -> tensor<?x?xbf16>
        %row_chunk = "loom.convert"(%x_tile_chunk) : (tensor<?x?xbf16>) -> tensor<?x?xf32>
        %sq_chunk = "loom.elementwise"(%row_chunk, %row_chunk) {fn = "mul"} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
        %ss_part = "loom.reduce"(%sq_chunk) {fn = "sum", axis = 1 : i64} : (tensor<?x?xf32>) -> tensor<?xf32>
        %ss_next = "loom.elementwise"(%ss_acc, %ss_part) {fn = "add"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
        "loom.yield"(%ss_next) : (tensor<?xf32>) -> ()
      }) {tile = @tile_x_d1, begin = "0", end = "256", trip_count = "ceildiv(256, tile_x_d1)"} : (tensor<?xf32>) -> (tensor<?xf32>)
      %ms = "loom.elementwise"(%ss) {fn = "mul", scalars = [0.00390625 : f64], scalar_positions = [1]} : (tensor<?xf32>) -> tensor<?xf32>
      %inv = "loom.elementwise"(%ms) {fn = "rsqrt"} : (tensor<?xf32>) -> tensor<?xf32>
      %invk = "loom.expand_dims"(%inv) {axis = 1 : i64} : (tensor<?xf32>) -> tensor<?x1xf32>
      "loom.store"(%inv, %inv_rms) {offsets = ["tile_m*tile_m_id", "0"], sizes = ["tile_m", "1"]} : (tensor<?xf32>, memref<64x1xf32>) -> ()
      "loom.for"() ({
      ^bb0(%tile_x_d1_id: index):
        %x_tile_chunk_2 = "loom.load"(%x) {offsets = ["tile_m*tile_m_id", "tile_x_d1*tile_x_d1_id"], sizes = ["tile_m", "tile_x_d1"]} : (memref<64x256xbf16>) -> tensor<?x?xbf16>
        %row_chunk_2 = "loom.convert"(%x_tile_chunk_2) : (tensor<?x?xbf16>) -> tensor<?x?xf32>
        %y_chunk = "loom.elementwise"(%row_chunk_2, %invk) {fn = "mul"} : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
        %w_chunk = "loom.load"(%w) {offsets = ["0", "tile_x_d1*tile_x_d1_id"], sizes = ["1", "tile_x_d1"]} : (memref<1x256xbf16>) -> tensor<?xbf16>
        %wf_chunk = "loom.convert"(%w_chunk) : (tensor<?xbf16>) -> tensor<?xf32>
        %yw_chunk = "loom.elementwise"(%y_chunk, %wf_chunk) {fn = "mul"} : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
        %yb_chunk = "loom.convert"(%yw_chunk) : (tensor<?x?xf32>) -> tensor<?x?xbf16>
        "loom.store"(%yb_chunk, %out) {offsets = ["tile_m*tile_m_id", "tile_x_d1*tile_x_d1_id"], sizes = ["tile_m", "tile_x_d1"]} : (tensor<?x?xbf16>, memref<64x256xbf16>) -> ()
        "loom.yield"() : () -> ()
      }) {tile = @tile_x_d1, begin = "0", end = "256", trip_count = "ceildiv(256, tile_x_d1)"} : () -> ()
      "loom.yield"() : () -> ()
    }) {tiles = [@tile_m], extents = [64 : index], num_tiles = ["ceildiv(64, tile_m)"]} : () -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
